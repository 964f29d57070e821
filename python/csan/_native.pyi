# Types of the compiled extension csan._native (python/src). Private: use csan.metrics.
from typing import Any, Dict, List, Optional, Sequence, Tuple

__version__: str
SACREBLEU_VERSION: str
MAX_RESAMPLES: int

class References:
    def __init__(self, references: Sequence[Sequence[Optional[str]]]) -> None: ...
    @property
    def num_refs(self) -> int: ...
    def __len__(self) -> int: ...

class SegmentStatistics:
    num_refs: int
    def __len__(self) -> int: ...
    def __getitem__(self, index: int) -> List[float]: ...
    def sum(self) -> List[float]: ...

class Metric:
    @property
    def name(self) -> str: ...
    def signature_layout(self) -> List[Tuple[str, str, Optional[str]]]: ...
    def segment_stats(self, hypotheses: Sequence[str], references: References) -> SegmentStatistics: ...
    def score(self, summed_stats: Sequence[float]) -> float: ...
    def verbose(self, summed_stats: Sequence[float]) -> str: ...

class Bleu(Metric):
    def __init__(
        self,
        *,
        tokenize: str,
        spm_model: str,
        lowercase: bool,
        smooth_method: str,
        smooth_value: Optional[float],
        effective_order: bool,
    ) -> None: ...
    def compute(self, summed_stats: Sequence[float]) -> Dict[str, Any]: ...

class Chrf(Metric):
    def __init__(
        self, *, char_order: int, word_order: int, beta: int, lowercase: bool, whitespace: bool, eps_smoothing: bool
    ) -> None: ...

class Ter(Metric):
    def __init__(self, *, case_sensitive: bool, normalized: bool, no_punct: bool, asian_support: bool) -> None: ...
    def compute(self, summed_stats: Sequence[float]) -> Tuple[float, float, float]: ...

def bleu_verbose(precisions: Sequence[float], bp: float, ratio: float, sys_len: int, ref_len: int) -> str: ...
def format_score(
    name: str,
    score: float,
    mean: Optional[float],
    ci: Optional[float],
    verbose: str,
    width: int,
    score_only: bool,
    signature: str,
    is_json: bool,
) -> str: ...
def paired_seed_text(seed: str) -> str: ...
def bootstrap_confidence(
    metric: Metric, stats: SegmentStatistics, n_samples: int, seed: str, threads: int
) -> Tuple[float, float, str]: ...
def paired_test(
    test_type: str,
    metrics: Sequence[Metric],
    stats: Sequence[Sequence[SegmentStatistics]],
    n_samples: int,
    seed: str,
    threads: int,
) -> Tuple[List[List[Tuple[float, Optional[float], Optional[float], Optional[float]]]], str]: ...
def preprocess(args: Sequence[str]) -> str: ...
