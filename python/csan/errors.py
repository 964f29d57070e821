"""The exceptions csan raises.

Every error of csan's own is a :class:`csan.Error` carrying csan's one-line message (the
one its executables print), so ``except csan.Error`` catches them all. The subclasses
also derive from the builtin exception a Python user would expect, so
``except ValueError`` or ``except FileNotFoundError`` keep working.

Wrong argument types raise the builtin :class:`TypeError`, as in any Python library.
"""


class Error(Exception):
    """Base class of every error csan raises itself."""


class BadOptionError(Error, ValueError):
    """An option, configuration key or argument value is invalid (unknown tokenizer,
    smoothing method, out-of-range count...)."""


class BadInputError(Error, ValueError):
    """Input data is malformed: hypotheses and references of different lengths, a
    segment without any reference, text that cannot be encoded as UTF-8, an empty corpus."""


class MissingFileError(Error, FileNotFoundError):
    """A file csan was asked to read does not exist."""


class CorruptCheckpointError(Error):
    """A checkpoint cannot be read as one (truncated, wrong format, inconsistent)."""


__all__ = ["Error", "BadOptionError", "BadInputError", "MissingFileError", "CorruptCheckpointError"]
