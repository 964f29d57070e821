"""csan.metrics against sacreBLEU 2.6.0's recorded results: every api_corpus,
api_sentence and api_confidence entry of the vectors (scores and statistics to the last
bit, signatures, format() lines), and the single-system command-line runs rebuilt from
the API (JSON and text outputs, widths, --short, -b, -ci, -sl)."""

from __future__ import annotations

import hashlib
from typing import Dict, List

import pytest

from csan.metrics import BLEUScore, Score, TERScore
from sacrebleu_vectors import SCORED_CASES, cases, lines, make_metric, parse, references

BLEU_FIELDS = ["counts", "totals", "precisions", "bp", "sys_len", "ref_len", "ratio"]


def check_score(score: Score, signature, expected: dict) -> None:
    assert score.name == expected["name"]
    assert score.score == expected["score"]
    assert signature.format() == expected["signature"]
    if "signature_short" in expected:
        assert signature.format(short=True) == expected["signature_short"]
    assert score.format(width=1, signature=str(signature)) == expected["text_w1"]
    if "text_w3" in expected:
        assert score.format(width=3, signature=signature.format()) == expected["text_w3"]
    if isinstance(score, BLEUScore):
        for name in BLEU_FIELDS:
            assert getattr(score, name) == expected[name], name
        assert all(isinstance(c, int) for c in score.counts[:1] + [score.sys_len, score.ref_len])
    if isinstance(score, TERScore):
        assert score.num_edits == expected["num_edits"]
        assert isinstance(score.num_edits, int)
        assert score.ref_length == expected["ref_length"]


@pytest.mark.parametrize("case", SCORED_CASES)
def test_corpus_entries(case: str) -> None:
    entries = cases()[case]["api_corpus"]
    assert entries
    for expected in entries:
        run = parse(expected["cli_args"])
        metric = make_metric(run.metrics[0], run.options)
        refs = references(case, run, rstrip=False)
        hyps = lines(case, run.systems[0], False)
        score = metric.corpus_score(hyps, refs)
        check_score(score, metric.get_signature(), expected)
        if "stats_sum" in expected:
            assert metric._extract_corpus_statistics(hyps, refs).sum() == expected["stats_sum"]


@pytest.mark.parametrize("case", [c for c in SCORED_CASES if cases()[c]["api_sentence"]])
def test_sentence_entries(case: str) -> None:
    configs = {e["config"]: parse(e["cli_args"]) for e in cases()[case]["api_corpus"]}
    for expected in cases()[case]["api_sentence"]:
        run = configs[expected["config"]]
        metric = make_metric(run.metrics[0], run.options, sentence_level=True)
        score = metric.sentence_score(expected["hyp"], expected["refs"])
        check_score(score, metric.get_signature(), expected)


@pytest.mark.parametrize("case", [c for c in SCORED_CASES if cases()[c]["api_confidence"]])
def test_confidence_entries(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SACREBLEU_SEED", raising=False)
    for expected in cases()[case]["api_confidence"]:
        run = parse(expected["cli_args"])
        metric = make_metric(run.metrics[0], run.options)
        hyps = lines(case, run.systems[0], False)
        score = metric.corpus_score(hyps, references(case, run, False), n_bootstrap=expected["n_bootstrap"])
        assert score.score == expected["score"]
        assert score._mean == expected["bootstrap_mean"]
        assert score._ci == expected["bootstrap_ci"]
        assert str(metric.get_signature()) == expected["signature"]


def single_system_runs() -> List[str]:
    ids = []
    for case in SCORED_CASES:
        for entry in cases()[case]["cli"]:
            run = parse(entry["args"])
            if entry["exit_code"] == 0 and entry["stdin"] is None and len(run.systems) == 1 and not run.paired:
                ids.append(entry["id"])
    return ids


def cli_entry(run_id: str) -> Dict:
    case = run_id.split("/")[0]
    return next(e for e in cases()[case]["cli"] if e["id"] == run_id)


@pytest.mark.parametrize("run_id", single_system_runs())
def test_command_line_outputs(run_id: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The output sacreBLEU printed, rebuilt from Score.format() and the signatures."""
    monkeypatch.delenv("SACREBLEU_SEED", raising=False)
    entry = cli_entry(run_id)
    case = run_id.split("/")[0]
    run = parse(entry["args"])
    refs = references(case, run, rstrip=True)
    hyps = lines(case, run.systems[0], True)
    if run.sentence_level:
        metric = make_metric(run.metrics[0], run.options, sentence_level=True)
        printed = []
        for i, hyp in enumerate(hyps):
            score = metric.sentence_score(hyp, [stream[i] for stream in refs])
            signature = metric.get_signature().format(short=run.short)
            printed.append(score.format(run.width, run.score_only, signature) + "\n")
        output = "".join(printed)
        if "stdout" in entry:
            assert output == entry["stdout"]
        else:  # long outputs are recorded as their head, line count and hash
            assert output.splitlines()[:60] == entry["stdout_head"].splitlines()
            assert len(printed) == entry["stdout_lines"]
            assert hashlib.sha256(output.encode()).hexdigest() == entry["stdout_sha256"]
        return

    is_json = run.format == "json"
    results = []
    for name in sorted(run.metrics):  # sacreBLEU prints BLEU, chrF, TER in this order
        metric = make_metric(name, run.options)
        score = metric.corpus_score(hyps, refs, n_bootstrap=run.confidence_n or 1)
        signature = metric.get_signature().format(short=run.short and not is_json)
        results.append(score.format(run.width, run.score_only, signature, is_json))
    if is_json:
        expected = results[0] + "\n" if len(results) == 1 else "[\n" + ",\n".join(results) + "\n]\n"
        assert entry["stdout"] == expected
    else:
        # Several text lines are right-aligned on their first '='.
        assert [line.lstrip() for line in entry["stdout"].splitlines()] == results
