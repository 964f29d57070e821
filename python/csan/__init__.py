"""csan: neural machine translation toolkit (C++, LibTorch) driven from Python.

So far the package offers :mod:`csan.metrics`, a sacreBLEU 2.6.0 compatible scorer
(BLEU, chrF, TER, paired significance tests) running csan's C++ scorer. Errors are
:class:`csan.Error` subclasses (see :mod:`csan.errors`).
"""

from . import errors, metrics
from ._native import __version__
from .errors import BadInputError, BadOptionError, CorruptCheckpointError, Error, MissingFileError

__all__ = [
    "__version__",
    "metrics",
    "errors",
    "Error",
    "BadOptionError",
    "BadInputError",
    "MissingFileError",
    "CorruptCheckpointError",
]
