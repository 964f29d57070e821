"""csan: neural machine translation toolkit (C++, LibTorch) driven from Python.

:class:`csan.Translator` translates raw text with csan checkpoints (an ensemble, fp32,
bf16 or int8, a lexical shortlist) through the same C++ code as csan-generate, and scores
translations by forced decoding; :class:`csan.Tagger` tags words with tagging checkpoints;
:func:`csan.train` and :func:`csan.preprocess` run csan-train and csan-preprocess in this
process; :mod:`csan.metrics` is a sacreBLEU 2.6.0 compatible scorer
(BLEU, chrF, TER, paired significance tests) running csan's C++ scorer. Errors are
:class:`csan.Error` subclasses (see :mod:`csan.errors`).
"""

from . import errors, metrics
from ._native import __version__
from .tagger import TaggedFile, Tagger
from .training import TrainResult, preprocess, train
from .translator import Translator
from .errors import BadInputError, BadOptionError, CorruptCheckpointError, Error, MissingFileError

__all__ = [
    "__version__",
    "metrics",
    "Translator",
    "Tagger",
    "TaggedFile",
    "train",
    "TrainResult",
    "preprocess",
    "errors",
    "Error",
    "BadOptionError",
    "BadInputError",
    "MissingFileError",
    "CorruptCheckpointError",
]
