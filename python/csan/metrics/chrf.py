"""chrF (Popović 2015) and chrF++ (Popović 2017) as sacreBLEU 2.6.0 computes them, on csan's C++ scorer."""

from typing import List, Optional, Sequence

from .. import _native
from .base import Metric, Score


class CHRFScore(Score):
    """A chrF score (sacreBLEU's ``CHRFScore``); the name is "chrF<beta>" plus one "+" per word order.

    :param score: chrF, from 0 to 100.
    :param char_order: the character n-gram order.
    :param word_order: the word n-gram order (2 = chrF++).
    :param beta: the weight of recall against precision.
    """

    def __init__(self, score: float, char_order: int, word_order: int, beta: int) -> None:
        self.beta = beta
        self.char_order = char_order
        self.word_order = word_order
        super().__init__(f"chrF{beta}" + "+" * word_order, score)


class CHRF(Metric[CHRFScore]):
    """chrF and chrF++ as sacreBLEU 2.6.0's ``CHRF``, with the same arguments and results.

    :param char_order: character n-gram order.
    :param word_order: word n-gram order (2 = chrF++).
    :param beta: the weight of recall against precision.
    :param lowercase: case-insensitive chrF.
    :param whitespace: keep whitespace in the character n-grams.
    :param eps_smoothing: epsilon smoothing (chrF++.py, Moses, NLTK) instead of sacreBLEU's
        effective order.
    :param references: reference streams to keep for later ``corpus_score(hyps, None)`` calls.
    """

    CHAR_ORDER = 6
    WORD_ORDER = 0
    BETA = 2

    def __init__(
        self,
        char_order: int = CHAR_ORDER,
        word_order: int = WORD_ORDER,
        beta: int = BETA,
        lowercase: bool = False,
        whitespace: bool = False,
        eps_smoothing: bool = False,
        references: Optional[Sequence[Sequence[Optional[str]]]] = None,
    ) -> None:
        native = _native.Chrf(
            char_order=char_order,
            word_order=word_order,
            beta=beta,
            lowercase=lowercase,
            whitespace=whitespace,
            eps_smoothing=eps_smoothing,
        )
        super().__init__(native, references)
        self.beta = beta
        self.char_order = char_order
        self.word_order = word_order
        self.order = char_order + word_order
        self.lowercase = lowercase
        self.whitespace = whitespace
        self.eps_smoothing = eps_smoothing

    def _compute_score_from_stats(self, stats: List[float]) -> CHRFScore:
        score = self._native.score([float(x) for x in stats])
        return CHRFScore(score, self.char_order, self.word_order, self.beta)
