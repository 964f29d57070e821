"""sacreBLEU 2.6.0's scoring API on csan's C++ scorer: same functions, classes, arguments,
results, ``format()`` strings and signatures, computed without the GIL.

>>> from csan.metrics import corpus_bleu, BLEU
>>> hyps = ["The dog bit the man.", "It wasn't surprising."]
>>> refs = [["The dog bit the man.", "It was not surprising."]]
>>> print(corpus_bleu(hyps, refs))
BLEU = 68.97 90.0/75.0/66.7/75.0 (BP = 0.905 ratio = 0.909 hyp_len = 10 ref_len = 11)
>>> bleu = BLEU()
>>> bleu.corpus_score(hyps, refs).format(signature=str(bleu.get_signature()))
'BLEU|nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0 = 68.97 90.0/75.0/66.7/75.0 (BP = 0.905 ratio = 0.909 hyp_len = 10 ref_len = 11)'

Differences from sacreBLEU: bad input raises :mod:`csan.errors` exceptions instead of
being truncated silently (hypotheses and references of different lengths) or crashing
(IndexError, AssertionError); ja-mecab/ko-mecab tokenizers and max_ngram_order other than 4
are not available; nothing is downloaded (the SentencePiece tokenizers take ``spm_model=``).
"""

from .._native import SACREBLEU_VERSION
from .base import Metric, Score, Signature
from .bleu import BLEU, BLEUScore
from .chrf import CHRF, CHRFScore
from .compat import (
    corpus_bleu,
    corpus_chrf,
    corpus_ter,
    raw_corpus_bleu,
    sentence_bleu,
    sentence_chrf,
    sentence_ter,
)
from .significance import PairedTest, Result
from .ter import TER, TERScore

#: The metrics by sacreBLEU's names for them.
METRICS = {"BLEU": BLEU, "CHRF": CHRF, "TER": TER}

__all__ = [
    "SACREBLEU_VERSION",
    "METRICS",
    "Metric",
    "Score",
    "Signature",
    "BLEU",
    "BLEUScore",
    "CHRF",
    "CHRFScore",
    "TER",
    "TERScore",
    "PairedTest",
    "Result",
    "corpus_bleu",
    "corpus_chrf",
    "corpus_ter",
    "raw_corpus_bleu",
    "sentence_bleu",
    "sentence_chrf",
    "sentence_ter",
]
