"""TER (Snover et al., 2006) as sacreBLEU 2.6.0 computes it (Tercom's algorithm), on csan's C++ scorer."""

from typing import List, Optional, Sequence

from .._native import Ter as NativeTer
from .base import Metric, Score


class TERScore(Score):
    """A TER score (sacreBLEU's ``TERScore``).

    :param score: TER in percent (edits per reference word; may exceed 100).
    :param num_edits: the edits summed over segments (an int, as sacreBLEU stores it).
    :param ref_length: the average reference lengths summed over segments.
    """

    def __init__(self, score: float, num_edits: float, ref_length: float) -> None:
        super().__init__("TER", score)
        self.num_edits = int(num_edits)
        self.ref_length = ref_length


class TER(Metric[TERScore]):
    """TER as sacreBLEU 2.6.0's ``TER``, with the same arguments and results.

    :param normalized: Tercom's normalisation and tokenization.
    :param no_punct: remove punctuation (with ``asian_support``, CJK punctuation too).
    :param asian_support: split CJK characters (with ``normalized``).
    :param case_sensitive: keep case (TER lowercases by default).
    :param references: reference streams to keep for later ``corpus_score(hyps, None)`` calls.
    """

    _native: NativeTer

    def __init__(
        self,
        normalized: bool = False,
        no_punct: bool = False,
        asian_support: bool = False,
        case_sensitive: bool = False,
        references: Optional[Sequence[Sequence[Optional[str]]]] = None,
    ) -> None:
        native = NativeTer(
            case_sensitive=case_sensitive, normalized=normalized, no_punct=no_punct, asian_support=asian_support
        )
        super().__init__(native, references)
        self.no_punct = no_punct
        self.normalized = normalized
        self.asian_support = asian_support
        self.case_sensitive = case_sensitive
        self.tokenizer_signature = self._signature_value("tok")

    def _compute_score_from_stats(self, stats: List[float]) -> TERScore:
        score, num_edits, ref_length = self._native.compute([float(x) for x in stats])
        return TERScore(score, num_edits, ref_length)
