"""csan.metrics.PairedTest against sacreBLEU 2.6.0's recorded --paired-bs / --paired-ar
runs: every score, p-value, bootstrap mean and interval to the last bit (JSON runs) and
the signatures (text runs), plus seeds and argument checks."""

from __future__ import annotations

import json
from typing import List

import pytest

import csan
from csan.metrics import BLEU, CHRF, PairedTest, Result
from sacrebleu_vectors import SCORED_CASES, cases, lines, make_metric, parse, references


def paired_runs(fmt: str) -> List[str]:
    ids = []
    for case in SCORED_CASES:
        for entry in cases()[case]["cli"]:
            run = parse(entry["args"])
            if run.paired and entry["exit_code"] == 0 and entry["stdin"] is None and run.format == fmt:
                ids.append(entry["id"])
    return ids


def run_test(run_id: str):
    case = run_id.split("/")[0]
    entry = next(e for e in cases()[case]["cli"] if e["id"] == run_id)
    run = parse(entry["args"])
    refs = references(case, run, rstrip=True)
    named = [(name, lines(case, name, True)) for name in run.systems]
    named[0] = ("Baseline: " + named[0][0], named[0][1])
    metrics = {name: make_metric(name, run.options) for name in run.metrics}
    test = PairedTest(named, metrics, refs, test_type=run.paired, n_samples=run.paired_n)
    return entry, run, test()


@pytest.mark.parametrize("run_id", paired_runs("json"))
def test_paired_values(run_id: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SACREBLEU_SEED", raising=False)
    entry, _, (_, scores) = run_test(run_id)
    expected = json.loads(entry["stdout"])
    assert scores["System"] == [row["system"] for row in expected]
    for s, row in enumerate(expected):
        for metric_name, values in row.items():
            if metric_name == "system":
                continue
            result = scores[metric_name][s]
            assert isinstance(result, Result)
            assert (result.score, result.p_value, result.mean, result.ci) == (
                values["score"],
                values["p_value"],
                values["mean"],
                values["ci"],
            ), (metric_name, s)


@pytest.mark.parametrize("run_id", paired_runs("text"))
def test_paired_signatures(run_id: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SACREBLEU_SEED", raising=False)
    entry, run, (signatures, scores) = run_test(run_id)
    assert list(signatures) == [name for name in scores if name != "System"]
    for signature in signatures.values():
        assert " " + signature.format(short=run.short) + "\n" in entry["stdout"]


def de500(name: str) -> List[str]:
    return list(lines("de500", name, True))


def test_seed_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    refs = [de500("ref.de")]
    systems = [("a", de500("sys_a.de")), ("b", de500("sys_b.de"))]
    monkeypatch.setenv("SACREBLEU_SEED", "7")
    signatures, seven = PairedTest(systems, {"BLEU": BLEU()}, refs, "bs", 200)()
    assert "|bs:200|seed:7|" in str(signatures["BLEU"])
    monkeypatch.setenv("SACREBLEU_SEED", "none")
    signatures, _ = PairedTest(systems, {"BLEU": BLEU()}, refs, "bs", 200)()
    assert "|seed:none|" in str(signatures["BLEU"])
    monkeypatch.setenv("SACREBLEU_SEED", "7")
    _, again = PairedTest(systems, {"BLEU": BLEU()}, refs, "bs", 200)()
    assert repr(again["BLEU"][1]) == repr(seven["BLEU"][1])
    monkeypatch.setenv("SACREBLEU_SEED", "seven")
    with pytest.raises(csan.BadOptionError, match="SACREBLEU_SEED"):
        PairedTest(systems, {"BLEU": BLEU()}, refs, "bs")


def test_cached_references_and_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    """references=None uses each metric's cached references; n_jobs changes nothing."""
    monkeypatch.delenv("SACREBLEU_SEED", raising=False)
    refs = [de500("ref.de")]
    systems = [("a", de500("sys_a.de")), ("c", de500("sys_c.de")), ("d", de500("sys_d.de"))]
    given = PairedTest(systems, {"chrF": CHRF()}, refs, "ar", 500)()[1]
    cached = PairedTest(systems, {"chrF": CHRF(references=refs)}, None, "ar", 500, n_jobs=2)()[1]
    assert [repr(r) for r in given["chrF2"]] == [repr(r) for r in cached["chrF2"]]


def test_result_repr() -> None:
    assert repr(Result(1.5, 0.25, 1.0, 0.5)) == "score=1.5,p_value=0.25,mean=1.0,ci=0.5"
    assert repr(Result(85.0)) == "score=85.0,p_value=None,mean=None,ci=None"


@pytest.mark.parametrize(
    "arguments, message",
    [
        ({"test_type": "t"}, "test_type"),
        ({"n_ar_confidence": 100}, "n_ar_confidence"),
        ({"n_jobs": -1}, "n_jobs"),
        ({"n_samples": 10**8}, "n_samples"),
    ],
)
def test_bad_arguments(arguments: dict, message: str) -> None:
    systems = [("a", ["x y"]), ("b", ["x z"])]
    with pytest.raises(csan.BadOptionError, match=message):
        PairedTest(systems, {"BLEU": BLEU()}, [["x y"]], **arguments)()


def test_bad_systems() -> None:
    with pytest.raises(csan.BadOptionError, match="baseline and at least one system"):
        PairedTest([("a", ["x"])], {"BLEU": BLEU()}, [["x"]])
    with pytest.raises(csan.BadInputError, match="hypotheses have 1 segments, references 2"):
        PairedTest([("a", ["x", "y"]), ("b", ["x"])], {"BLEU": BLEU()}, [["x", "y"]])()
