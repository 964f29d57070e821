"""What every metric shares: :class:`Score`, :class:`Signature` and :class:`Metric`.

As in sacreBLEU 2.6.0, a metric extracts per-segment sufficient statistics once; corpus
scores, sentence scores, bootstrap intervals and paired tests only sum them. The
statistics stay in csan's C++ scorer, which runs without the GIL.
"""

import os
import statistics
from collections import abc
from typing import Any, Dict, Generic, Iterable, List, Optional, Sequence, Tuple, TypeVar, Union

from .. import _native
from ..errors import BadInputError, BadOptionError

#: sacreBLEU's default seed for resampling when SACREBLEU_SEED is not set.
DEFAULT_SEED = "12345"


class Score:
    """A metric's score, printed as sacreBLEU 2.6.0 prints it.

    :param name: the metric's name as printed ("BLEU", "chrF2", "chrF2++", "TER").
    :param score: the score, from 0 to 100 (TER may exceed 100).

    After a bootstrap (``corpus_score(..., n_bootstrap=N)``) ``_mean`` and ``_ci`` hold the
    bootstrap mean and the half-width of its 95% confidence interval (-1 otherwise).
    """

    def __init__(self, name: str, score: float) -> None:
        self.name = name
        self.score = score
        self._mean = -1.0
        self._ci = -1.0
        self._verbose = ""

    def format(
        self,
        width: int = 2,
        score_only: bool = False,
        signature: Union[str, "Signature"] = "",
        is_json: bool = False,
    ) -> str:
        """The score as text, exactly as sacreBLEU 2.6.0's ``Score.format``.

        :param width: decimals of the score (and of the confidence interval).
        :param score_only: only the number (with "(μ = ... ± ...)" after a bootstrap).
        :param signature: the signature to print after the name (``str(metric.get_signature())``).
        :param is_json: a JSON object (indent 1) with name, score, signature and each
            signature field, as sacreBLEU's ``-f json`` prints it.
        """
        confident = self._mean > 0
        return _native.format_score(
            self.name,
            float(self.score),
            float(self._mean) if confident else None,
            float(self._ci) if confident else None,
            self._verbose,
            width,
            score_only,
            str(signature),
            is_json,
        )

    def estimate_ci(self, scores: List["Score"]) -> None:
        """Stores the mean of ``scores`` and the half-width of their 95% interval (the
        1/40 and 39/40 order statistics) as this score's confidence."""
        ordered = sorted(s.score for s in scores)
        lower = len(ordered) // 40
        upper = len(ordered) - lower - 1
        self._ci = 0.5 * (ordered[upper] - ordered[lower])
        self._mean = statistics.mean(ordered)

    def __repr__(self) -> str:
        return self.format()


class Signature:
    """A reproducibility signature ("nrefs:1|case:mixed|...|version:2.6.0").

    ``info`` maps each field to its value in printing order (None: left out); ``format(short=True)``
    uses the short keys ("#:1|c:mixed|...|v:2.6.0"). Made by :meth:`Metric.get_signature`.
    """

    def __init__(
        self,
        layout: Iterable[Tuple[str, str, Optional[str]]],
        values: Dict[str, Any],
    ) -> None:
        self._abbr: Dict[str, str] = {}
        self.info: Dict[str, Any] = {}
        for key, short_key, value in layout:
            self._abbr[key] = short_key
            self.info[key] = values.get(key, value)

    def format(self, short: bool = False) -> str:
        """The signature as text; ``short`` uses the abbreviated keys."""
        pairs = []
        for key, value in self.info.items():
            if value is None:
                continue
            if isinstance(value, bool):
                value = "yes" if value else "no"
            pairs.append(f"{self._abbr.get(key, key) if short else key}:{value}")
        return "|".join(pairs)

    def update(self, key: str, value: Any) -> None:
        """Sets a field; a new one goes before the version, which always comes last."""
        if key in self.info:
            self.info[key] = value
            return
        version = self.info.pop("version", None)
        self.info[key] = value
        if version is not None:
            self.info["version"] = version

    def __str__(self) -> str:
        return self.format()

    def __repr__(self) -> str:
        return self.format()


ScoreT = TypeVar("ScoreT", bound=Score)


class Metric(Generic[ScoreT]):
    """Base class of :class:`~csan.metrics.BLEU`, :class:`~csan.metrics.CHRF` and
    :class:`~csan.metrics.TER` (as sacreBLEU 2.6.0's ``Metric``).

    ``references`` given to a metric's constructor are kept, so that
    ``corpus_score(hyps, None)`` scores against them (sacreBLEU's reference cache).
    """

    def __init__(self, native: _native.Metric, references: Optional[Sequence[Sequence[Optional[str]]]] = None) -> None:
        self._native = native
        self._ref_cache: Optional[_native.References] = None
        # Only BLEU warns about tokenized input.
        self._force = True
        # Set by a bootstrap; the signature then shows bs and seed.
        self.n_bootstrap: Optional[int] = None
        self.seed: Optional[str] = None
        # References per segment (-1: it varies); known once references are seen.
        self.num_refs: Optional[int] = None
        if references is not None:
            self._ref_cache = _native.References(references)
            self.num_refs = self._ref_cache.num_refs

    def _signature_value(self, key: str) -> str:
        return next(str(value) for k, _, value in self._native.signature_layout() if k == key)

    def _references(self, references: Optional[Sequence[Sequence[Optional[str]]]]) -> _native.References:
        # As sacreBLEU: None or an empty sequence means the cached references.
        if references is not None and not (isinstance(references, abc.Sized) and len(references) == 0):
            return _native.References(references)
        if self._ref_cache is not None:
            return self._ref_cache
        raise BadOptionError("no references given and none cached (pass references= to the metric's constructor)")

    def _check_tokenized(self, hypotheses: Sequence[str]) -> None:
        """BLEU warns when hypotheses look tokenized; the other metrics do not."""

    def _extract_corpus_statistics(
        self, hypotheses: Sequence[str], references: Optional[Sequence[Sequence[Optional[str]]]]
    ) -> _native.SegmentStatistics:
        """Per-segment statistics of ``hypotheses`` (kept in C++; ``len()``, ``[i]`` and
        ``sum()`` read them)."""
        if not isinstance(hypotheses, abc.Sequence) and isinstance(hypotheses, abc.Iterable):
            hypotheses = list(hypotheses)  # a generator is read once, here
        stats = self._native.segment_stats(hypotheses, self._references(references))
        if len(stats) == 0:
            raise BadInputError("no hypotheses to score")
        self.num_refs = stats.num_refs
        self._check_tokenized(hypotheses)
        return stats

    def _compute_score_from_stats(self, stats: List[float]) -> ScoreT:
        """The score of statistics already summed over segments."""
        raise NotImplementedError

    def _aggregate_and_compute(self, stats: _native.SegmentStatistics) -> ScoreT:
        """The score of a corpus from its per-segment statistics."""
        return self._compute_score_from_stats(stats.sum())

    def sentence_score(self, hypothesis: str, references: Sequence[Optional[str]]) -> ScoreT:
        """Scores one hypothesis against its references (a sequence of str; None entries are skipped)."""
        if not isinstance(hypothesis, str):
            raise TypeError(f"hypothesis: expected str, got {type(hypothesis).__name__}")
        if isinstance(references, str) or not isinstance(references, abc.Sequence):
            raise TypeError(f"references: expected a sequence of str, got {type(references).__name__}")
        stats = self._extract_corpus_statistics([hypothesis], [[ref] for ref in references])
        return self._aggregate_and_compute(stats)

    def corpus_score(
        self,
        hypotheses: Sequence[str],
        references: Optional[Sequence[Sequence[Optional[str]]]],
        n_bootstrap: int = 1,
    ) -> ScoreT:
        """Scores a corpus.

        :param hypotheses: one str per segment.
        :param references: reference streams, each with one str per segment (``[refs]``
            for a single reference; None where a stream has no reference for a segment).
            None or empty: the references given to the constructor.
        :param n_bootstrap: above 1, also estimates the 95% confidence interval with that
            many bootstrap resamples (seed: SACREBLEU_SEED, default 12345, "none" for a
            random one), as ``sacrebleu -ci`` does.
        """
        stats = self._extract_corpus_statistics(hypotheses, references)
        score = self._aggregate_and_compute(stats)
        if n_bootstrap > 1:
            seed = os.environ.get("SACREBLEU_SEED", DEFAULT_SEED)
            score._mean, score._ci, self.seed = _native.bootstrap_confidence(self._native, stats, n_bootstrap, seed, 0)
            self.n_bootstrap = n_bootstrap
        return score

    def get_signature(self) -> Signature:
        """The signature of the last scoring run (references per segment, bootstrap, options)."""
        if self.num_refs is None:
            raise BadOptionError("Number of references unknown, please evaluate the metric first.")
        values = {
            "nrefs": "var" if self.num_refs == -1 else self.num_refs,
            "bs": self.n_bootstrap,
            "seed": self.seed,
        }
        return Signature(self._native.signature_layout(), values)
