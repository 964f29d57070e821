"""Reads `csan-score --paired-bs -f json` (sacreBLEU's format): a list of systems, each
{"system": NAME, METRIC: {"score", "p_value", "mean", "ci"}, ...}; the first is the
baseline ("Baseline: NAME", p_value null)."""
import json
import os

from . import PlotError

BASELINE_PREFIX = "Baseline: "


class System:
    def __init__(self, name, is_baseline, scores):
        self.name = name
        self.is_baseline = is_baseline
        self.scores = scores  # metric -> {"score", "p_value", "mean", "ci"}


def read_paired_bootstrap(path):
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except OSError as e:
        raise PlotError(f"{path}: cannot read: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise PlotError(f"{path}:{e.lineno}: malformed JSON: {e.msg}") from None
    if not isinstance(data, list) or len(data) < 2 or not all(isinstance(s, dict) for s in data):
        raise PlotError(f"{path}: not csan-score --paired-bs -f json output (a list of at least two systems)")
    systems, metrics = [], None
    for i, entry in enumerate(data):
        name = entry.get("system")
        if not isinstance(name, str):
            raise PlotError(f"{path}: system {i + 1} has no 'system' name")
        scores = {k: v for k, v in entry.items() if k != "system"}
        for metric, value in scores.items():
            if not isinstance(value, dict) or not all(k in value for k in ("score", "mean", "ci")):
                raise PlotError(f"{path}: system '{name}', metric '{metric}': no score/mean/ci "
                                "(was it written with --paired-bs?)")
        if metrics is None:
            metrics = list(scores)
        elif list(scores) != metrics:
            raise PlotError(f"{path}: system '{name}' has metrics {list(scores)}, the baseline {metrics}")
        baseline = name.startswith(BASELINE_PREFIX)
        if baseline != (i == 0):
            raise PlotError(f"{path}: the first system, and only it, must be the baseline")
        if baseline:
            name = name[len(BASELINE_PREFIX):]
        systems.append(System(os.path.basename(name) or name, baseline, scores))
    if not metrics:
        raise PlotError(f"{path}: no metric scores")
    return metrics, systems
