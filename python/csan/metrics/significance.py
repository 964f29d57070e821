"""Paired significance tests between systems, as sacreBLEU 2.6.0's ``PairedTest``
(``sacrebleu --paired-bs`` / ``--paired-ar``), with the same numbers to the last digit."""

import os
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from .. import _native
from ..errors import BadOptionError
from .base import DEFAULT_SEED, Metric, Signature


class Result:
    """One system's result for one metric.

    :param score: the system's score.
    :param p_value: the p-value of its difference to the baseline (None for the baseline).
    :param mean: the bootstrap mean of its score (paired bootstrap only).
    :param ci: the half-width of the 95% confidence interval around ``mean`` (paired bootstrap only).
    """

    def __init__(
        self, score: float, p_value: Optional[float] = None, mean: Optional[float] = None, ci: Optional[float] = None
    ) -> None:
        self.score = score
        self.p_value = p_value
        self.mean = mean
        self.ci = ci

    def __repr__(self) -> str:
        return ",".join(f"{key}={value}" for key, value in self.__dict__.items())


class PairedTest:
    """Compares systems with a baseline: paired bootstrap resampling (``test_type="bs"``,
    Koehn 2004) or paired approximate randomization (``"ar"``, Riezler and Maxwell 2005).

    :param named_systems: (name, hypotheses) pairs; the first is the baseline.
    :param metrics: metrics by name, e.g. ``{"BLEU": BLEU(), "chrF": CHRF()}``.
    :param references: reference streams (``[refs]``), or None to use each metric's cached references.
    :param test_type: "bs" or "ar".
    :param n_samples: resamples (bs) or trials (ar); 0 takes sacreBLEU's defaults (1000 / 10000).
    :param n_ar_confidence: must stay -1 (sacreBLEU's default: no bootstrap interval for ar).
    :param n_jobs: threads (0 and 1: all cores); results do not depend on it.

    The seed is SACREBLEU_SEED (default 12345; "none" for a random one), read here.
    Calling the test returns ``(signatures, scores)``: signatures by metric name, and
    ``scores["System"]`` (the names) plus, per metric name, a :class:`Result` per system.
    """

    _DEFAULT_SAMPLES = {"ar": 10000, "bs": 1000}

    def __init__(
        self,
        named_systems: List[Tuple[str, Sequence[str]]],
        metrics: Mapping[str, Metric[Any]],
        references: Optional[Sequence[Sequence[Optional[str]]]],
        test_type: str = "ar",
        n_samples: int = 0,
        n_ar_confidence: int = -1,
        n_jobs: int = 1,
    ) -> None:
        if test_type not in self._DEFAULT_SAMPLES:
            raise BadOptionError(f"test_type: expected 'ar' or 'bs', got {test_type!r}")
        if n_ar_confidence != -1:
            raise BadOptionError("n_ar_confidence: csan gives approximate randomization no bootstrap interval; keep -1")
        if len(named_systems) < 2:
            raise BadOptionError("named_systems: a paired test needs a baseline and at least one system")
        if n_jobs < 0:
            raise BadOptionError(f"n_jobs: expected 0 or a positive number, got {n_jobs}")
        self.test_type = test_type
        self.n_jobs = n_jobs
        self.references = references
        self.named_systems = named_systems
        self.n_systems = len(named_systems) - 1
        self.n_ar_confidence = n_ar_confidence
        self.n_samples = n_samples if n_samples > 0 else self._DEFAULT_SAMPLES[test_type]
        self._seed = os.environ.get("SACREBLEU_SEED", DEFAULT_SEED)
        seed_text = _native.paired_seed_text(self._seed)

        # The baseline's statistics once; signatures name the metric as its scores do.
        self.metrics: Dict[str, Metric[Any]] = {}
        self._baseline_stats: Dict[str, _native.SegmentStatistics] = {}
        self._signatures: Dict[str, Signature] = {}
        baseline_hypotheses = named_systems[0][1]
        for metric in metrics.values():
            stats = metric._extract_corpus_statistics(baseline_hypotheses, references)
            name = metric._aggregate_and_compute(stats).name
            self.metrics[name] = metric
            self._baseline_stats[name] = stats
            signature = metric.get_signature()
            signature.update("seed", seed_text)
            signature.update(test_type, self.n_samples)
            self._signatures[name] = signature

    def __call__(self) -> Tuple[Dict[str, Signature], Dict[str, List[Union[str, Result]]]]:
        """Runs the test; returns (signatures, scores) as sacreBLEU's ``PairedTest`` does."""
        names = list(self.metrics)
        stats = [[self._baseline_stats[name] for name in names]]
        for _, hypotheses in self.named_systems[1:]:
            stats.append(
                [self.metrics[name]._extract_corpus_statistics(hypotheses, self.references) for name in names]
            )
        table, _ = _native.paired_test(
            self.test_type,
            [self.metrics[name]._native for name in names],
            stats,
            self.n_samples,
            self._seed,
            self.n_jobs if self.n_jobs > 1 else 0,
        )
        scores: Dict[str, List[Union[str, Result]]] = {"System": [name for name, _ in self.named_systems]}
        for m, name in enumerate(names):
            scores[name] = [Result(*row[m]) for row in table]
        return self._signatures, scores
