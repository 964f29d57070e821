"""The sacreBLEU 2.6.0 test vectors (../shared/vectors/sacrebleu) and their command lines
turned into csan.metrics calls, shared by the metric and significance tests."""

from __future__ import annotations

import functools
import json
import os
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from csan.metrics import BLEU, CHRF, TER, Metric

VECTORS_DIR = os.path.join(os.environ.get("CSAN_SHARED_DIR", "../../../shared"), "vectors", "sacrebleu")
SCORED_CASES = ["de500", "en500", "multiref_de", "edge", "tiny", "zh_small"]


@functools.lru_cache(maxsize=None)
def cases() -> Dict[str, dict]:
    with open(os.path.join(VECTORS_DIR, "expected.json"), encoding="utf-8") as f:
        return json.load(f)["cases"]


@functools.lru_cache(maxsize=None)
def lines(case: str, name: str, rstrip: bool) -> Tuple[str, ...]:
    """A case file split on '\\n' only (a last line without '\\n' counts). The command
    line also rstrips each line; the api_* entries were computed without that."""
    with open(os.path.join(VECTORS_DIR, cases()[case]["dir"], name), encoding="utf-8", newline="") as f:
        text = f.read()
    parts = text.split("\n")
    if parts and parts[-1] == "":
        parts.pop()
    return tuple(p.rstrip() if rstrip else p for p in parts)


@dataclass
class Run:
    """A sacreBLEU command line of the vectors, parsed."""

    refs: List[str] = field(default_factory=list)
    systems: List[str] = field(default_factory=list)
    metrics: List[str] = field(default_factory=list)
    options: Dict[str, object] = field(default_factory=dict)
    num_refs: int = 1
    width: int = 1
    score_only: bool = False
    short: bool = False
    format: str = "json"
    confidence_n: Optional[int] = None
    sentence_level: bool = False
    paired: Optional[str] = None
    paired_n: int = 0


# Option -> (keyword of csan.metrics' classes, how its value is read).
_VALUE_OPTIONS = {
    "-tok": ("tokenize", str),
    "-s": ("smooth_method", str),
    "-sv": ("smooth_value", float),
    "-cc": ("char_order", int),
    "-cw": ("word_order", int),
    "--chrf-beta": ("beta", int),
}
_FLAG_OPTIONS = {
    "-lc": "lowercase",
    "--chrf-whitespace": "whitespace",
    "--chrf-lowercase": "chrf_lowercase",
    "--chrf-eps-smoothing": "eps_smoothing",
    "--ter-case-sensitive": "case_sensitive",
    "--ter-normalized": "normalized",
    "--ter-no-punct": "no_punct",
    "--ter-asian-support": "asian_support",
}


def parse(args: List[str]) -> Run:
    run = Run()
    i = 0
    while i < len(args) and not args[i].startswith("-"):
        run.refs.append(args[i])
        i += 1
    target = None
    while i < len(args):
        arg = args[i]
        i += 1
        if arg in ("-i", "-m"):
            target = run.systems if arg == "-i" else run.metrics
        elif not arg.startswith("-") and target is not None:
            target.append(arg)
        elif arg in _VALUE_OPTIONS:
            key, kind = _VALUE_OPTIONS[arg]
            run.options[key] = kind(args[i])
            i += 1
        elif arg in _FLAG_OPTIONS:
            run.options[_FLAG_OPTIONS[arg]] = True
        elif arg in ("-w", "-f", "-nr", "-cin", "--paired-bs-n", "--paired-ar-n"):
            value = args[i]
            i += 1
            if arg == "-w":
                run.width = int(value)
            elif arg == "-f":
                run.format = value
            elif arg == "-nr":
                run.num_refs = int(value)
            elif arg == "-cin":
                run.confidence_n = int(value)
            else:
                run.paired_n = int(value)
        elif arg == "-b":
            run.score_only = True
        elif arg == "--short":
            run.short = True
        elif arg == "-ci":
            run.confidence_n = run.confidence_n or 1000
        elif arg == "-sl":
            run.sentence_level = True
        elif arg in ("--paired-bs", "--paired-ar"):
            run.paired = arg[-2:]
        else:
            raise ValueError(f"option not handled by the vector tests: {arg}")
        if arg.startswith("-") and arg not in ("-i", "-m"):
            target = None
    run.metrics = run.metrics or ["bleu"]
    return run


def make_metric(name: str, options: Dict[str, object], sentence_level: bool = False) -> Metric:
    """The metric a command line asks for (sentence-level BLEU uses effective order, as -sl does)."""
    o = options
    if name == "bleu":
        return BLEU(
            lowercase=bool(o.get("lowercase", False)),
            tokenize=o.get("tokenize"),  # type: ignore[arg-type]
            smooth_method=str(o.get("smooth_method", "exp")),
            smooth_value=o.get("smooth_value"),  # type: ignore[arg-type]
            effective_order=sentence_level,
        )
    if name == "chrf":
        return CHRF(
            char_order=int(o.get("char_order", 6)),  # type: ignore[call-overload]
            word_order=int(o.get("word_order", 0)),  # type: ignore[call-overload]
            beta=int(o.get("beta", 2)),  # type: ignore[call-overload]
            lowercase=bool(o.get("chrf_lowercase", False)),
            whitespace=bool(o.get("whitespace", False)),
            eps_smoothing=bool(o.get("eps_smoothing", False)),
        )
    if name == "ter":
        return TER(
            normalized=bool(o.get("normalized", False)),
            no_punct=bool(o.get("no_punct", False)),
            asian_support=bool(o.get("asian_support", False)),
            case_sensitive=bool(o.get("case_sensitive", False)),
        )
    raise ValueError(name)


def references(case: str, run: Run, rstrip: bool) -> List[Tuple[str, ...]]:
    """The reference streams of a run (-nr N: tab-separated references in one file)."""
    if run.num_refs == 1:
        return [lines(case, name, rstrip) for name in run.refs]
    rows = [line.split("\t") for line in lines(case, run.refs[0], rstrip)]
    return [tuple(stream) for stream in zip(*rows)]
