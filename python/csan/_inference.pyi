# Types of the compiled extension csan._inference (python/src/inference). Private: use csan.Translator.
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

class Hypothesis:
    @property
    def text(self) -> str: ...
    @property
    def tokens(self) -> List[int]: ...
    @property
    def score(self) -> float: ...
    @property
    def positional_scores(self) -> List[float]: ...

class ForcedScore:
    @property
    def log_probability(self) -> float: ...
    @property
    def tokens(self) -> List[int]: ...
    @property
    def positional_scores(self) -> List[float]: ...

class Translator:
    def __init__(
        self,
        paths: Sequence[str],
        device: str,
        precision: str,
        quantize_skip: Sequence[str],
        threads: int,
        shortlist: str,
        source_lang: str,
        target_lang: str,
        verbose: bool,
    ) -> None: ...
    def translate(
        self,
        lines: Sequence[str],
        beam: int,
        nbest: int,
        lenpen: float,
        max_len_a: float,
        max_len_b: int,
        min_len: int,
        unkpen: float,
        no_repeat_ngram_size: int,
        sampling: bool,
        sampling_topk: int,
        sampling_topp: float,
        temperature: float,
        seed: int,
        batch_size: int,
        max_tokens: int,
        parallel_batches: int,
    ) -> List[List[Hypothesis]]: ...
    def score(
        self, sources: Sequence[str], targets: Sequence[str], batch_size: int, max_tokens: int
    ) -> List[ForcedScore]: ...
    @property
    def source_language(self) -> str: ...
    @property
    def target_language(self) -> str: ...
    @property
    def precision(self) -> str: ...
    @property
    def device(self) -> str: ...

class Tagger:
    def __init__(self, paths: Sequence[str], device: str, threads: int) -> None: ...
    def tag(self, sentences: Sequence[Sequence[str]], batch_size: int) -> List[List[str]]: ...
    def tag_conllu(self, in_path: str, out_path: str, batch_size: int) -> Tuple[int, int, int]: ...
    @property
    def column(self) -> str: ...
    @property
    def device(self) -> str: ...

def train(
    recipe: str,
    overrides: Sequence[str],
    settings: Sequence[Tuple[str, Union[bool, int, float, str]]],
    command_line: str,
    on_log: Optional[Callable[[Dict[str, Any]], None]],
) -> Tuple[int, str]: ...
def train_flags() -> List[Tuple[str, str, str]]: ...
