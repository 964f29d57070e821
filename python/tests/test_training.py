"""csan.preprocess and csan.train against csan-preprocess and csan-train on the toy corpus:
the same data files; the same log lines, metrics.jsonl and parameters for the same seed;
on_log gets metrics.jsonl's records; Ctrl-C saves a checkpoint that resumes; bad inputs
raise csan.Error subclasses with csan's one-line messages."""

from __future__ import annotations

import filecmp
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import csan

BUILD = Path(os.environ.get("CSAN_BUILD_DIR", Path(__file__).resolve().parents[2] / "build"))
BIN = Path(os.environ.get("CSAN_BIN_DIR", BUILD / "cli"))
RECIPE = Path(__file__).resolve().parents[2] / "recipes" / "tiny-transformer.yaml"
# A short run with a validation and checkpoints within it.
FLAGS = {"seed": 3, "max_update": 12, "log_interval": 3, "validate_interval_updates": 6, "max_tokens": 512}
OVERRIDES = {"lr_scheduler.warmup_updates": 4, "optimization.lr": 2e-3}
# Fields of a log that depend on the clock or the process, not on the training.
TIMING_FIELDS = ("wps", "ups", "wall", "rss_mib", "peak_rss_mib")


def run(*command: object, **kwargs) -> subprocess.CompletedProcess:
    done = subprocess.run([str(c) for c in command], capture_output=True, text=True, **kwargs)
    assert done.returncode == 0, f"{command[0]}: exit {done.returncode}\n{done.stderr}"
    return done


def cli_flags() -> list:
    flags = [f"--{k.replace('_', '-')}={v}" for k, v in FLAGS.items()]
    return flags + [f"--set={k}={v}" for k, v in OVERRIDES.items()]


@pytest.fixture(scope="module")
def toy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("toy")
    run(BUILD / "tools" / "csan-toy-corpus", "--out-dir", root / "raw", "--train", "400", "--valid", "20",
        "--test", "5", "--seed", "3", "--max-words", "6")
    return root


PREPROCESS = dict(source_lang="src", target_lang="tgt", joined_dictionary=True, spm_vocab_size=100, workers=1)


@pytest.fixture(scope="module")
def data(toy: Path) -> dict:
    """The toy corpus preprocessed by csan-preprocess and by csan.preprocess."""
    raw = toy / "raw"
    cli = run(BIN / "csan-preprocess", "--source-lang", "src", "--target-lang", "tgt", "--trainpref", raw / "train",
              "--validpref", raw / "valid", "--destdir", toy / "bin-cli", "--joined-dictionary",
              "--spm-vocab-size", "100", "--workers", "1")
    summary = csan.preprocess(trainpref=raw / "train", validpref=[raw / "valid"], destdir=toy / "bin-py",
                              **PREPROCESS)
    return {"cli": toy / "bin-cli", "py": toy / "bin-py", "cli_log": cli.stderr, "summary": summary}


def test_preprocess_writes_what_csan_preprocess_writes(data: dict) -> None:
    names = sorted(os.listdir(data["cli"]))
    assert names == sorted(os.listdir(data["py"])) and "train.src-tgt.src.bin" in names
    same, differ, errors = filecmp.cmpfiles(data["cli"], data["py"], [n for n in names if n != "preprocess.json"],
                                            shallow=False)
    assert differ == [] and errors == []
    cli, py = (json.loads((data[k] / "preprocess.json").read_text()) for k in ("cli", "py"))
    assert cli == py
    assert data["summary"] == data["cli_log"].replace(str(data["cli"]), str(data["py"]))


def timing_free(log: str) -> list:
    """The log's lines without what depends on the clock (speeds, ETA, seconds)."""
    lines = []
    for line in log.splitlines():
        line = re.sub(r" \| (wps|ups|eta) [^ ]*", "", line)
        line = re.sub(r"\d+(\.\d+)? ?(s|ms|min)\b", "T", line)
        lines.append(line)
    return lines


def metrics(path: Path) -> list:
    records = [json.loads(line) for line in path.read_text().splitlines()]
    for record in records:
        for field in TIMING_FIELDS:
            record.pop(field, None)
    return records


def tensors(checkpoint: Path) -> dict:
    """Every tensor of a checkpoint (safetensors: parameters, buffers, optimizer state) as
    (dtype, shape, bytes)."""
    raw = checkpoint.read_bytes()
    size = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8:8 + size])
    base = 8 + size
    return {name: (t["dtype"], t["shape"], raw[base + t["data_offsets"][0]:base + t["data_offsets"][1]])
            for name, t in header.items() if name != "__metadata__"}


def assert_same_tensors(a: Path, b: Path) -> None:
    ta, tb = tensors(a), tensors(b)
    assert sorted(ta) == sorted(tb) and len(ta) > 10
    for name in ta:
        assert ta[name] == tb[name], name


@pytest.fixture(scope="module")
def cli_run(toy: Path, data: dict) -> dict:
    done = run(BIN / "csan-train", RECIPE, "--data", data["cli"], "--save-dir", toy / "ckpt-cli", *cli_flags())
    return {"dir": toy / "ckpt-cli", "log": done.stderr}


def test_train_equals_csan_train(toy: Path, data: dict, cli_run: dict) -> None:
    """csan.train in a child process (to read its stderr) against csan-train."""
    save_dir = toy / "ckpt-py"
    script = (
        "import csan, json, sys\n"
        f"r = csan.train({str(RECIPE)!r}, data={str(data['cli'])!r}, save_dir={str(save_dir)!r}, "
        f"overrides={OVERRIDES!r}, **{FLAGS!r})\n"
        "print(json.dumps([r.save_dir, r.last_checkpoint, r.best_checkpoint, r.last_valid, len(r.records)]))\n"
    )
    done = run(sys.executable, "-c", script, env=os.environ)
    directory, last, best, last_valid, count = json.loads(done.stdout)
    assert (directory, last, best) == (str(save_dir), str(save_dir / "checkpoint_last.pt"),
                                       str(save_dir / "checkpoint_best.pt"))
    assert timing_free(done.stderr) == timing_free(cli_run["log"])
    assert metrics(save_dir / "metrics.jsonl") == metrics(cli_run["dir"] / "metrics.jsonl")
    records = [json.loads(line) for line in (save_dir / "metrics.jsonl").read_text().splitlines()]
    assert count == len(records) == 6 and last_valid == records[-1] and last_valid["kind"] == "valid"
    assert_same_tensors(save_dir / "checkpoint_last.pt", cli_run["dir"] / "checkpoint_last.pt")
    assert "csan.train(" in json.loads((save_dir / "run.json").read_text())["command"]


def test_on_log_gets_the_metrics_records(toy: Path, data: dict) -> None:
    got = []
    result = csan.train(RECIPE, data=data["py"], save_dir=toy / "ckpt-log", overrides=OVERRIDES, on_log=got.append,
                        **{**FLAGS, "max_update": 6})
    assert got == [json.loads(line) for line in (toy / "ckpt-log" / "metrics.jsonl").read_text().splitlines()]
    assert [(r["kind"], r["update"]) for r in got] == [("train", 3), ("train", 6), ("valid", 6)]
    assert result.records == got and result.last_valid == got[-1]


def test_ctrl_c_saves_a_checkpoint_that_resumes(toy: Path, data: dict, cli_run: dict) -> None:
    save_dir = toy / "ckpt-interrupted"
    calls = []

    def interrupt_after_update_6(record: dict) -> None:
        calls.append(record)
        if record["update"] == 6 and record["kind"] == "train":
            signal.raise_signal(signal.SIGINT)  # as Ctrl-C would

    previous = signal.getsignal(signal.SIGINT)
    with pytest.raises(KeyboardInterrupt, match="stopped by SIGINT; saved .*checkpoint_last.pt"):
        csan.train(RECIPE, data=data["cli"], save_dir=save_dir, overrides=OVERRIDES, on_log=interrupt_after_update_6,
                   **FLAGS)
    assert signal.getsignal(signal.SIGINT) is previous
    with pytest.raises(KeyboardInterrupt):  # Python's handler is back
        signal.raise_signal(signal.SIGINT)
    # The signal came while update 6 was logged: the loop stopped after the next update.
    assert [(r["kind"], r["update"]) for r in calls] == [("train", 3), ("train", 6), ("valid", 6)]
    stopped = tensors(save_dir / "checkpoint_last.pt")
    assert stopped != tensors(save_dir / "checkpoint_best.pt")  # saved after update 7, not at the validation
    resumed = csan.train(RECIPE, data=data["cli"], save_dir=save_dir, overrides=OVERRIDES, **FLAGS)
    assert [(r["kind"], r["update"]) for r in resumed.records] == [("train", 9), ("train", 12), ("valid", 12)]
    # Resumed, the run ends where the uninterrupted one does (to float rounding: the
    # optimizer's state goes through the checkpoint).
    expected = metrics(cli_run["dir"] / "metrics.jsonl")[-1]
    assert resumed.last_valid["loss"] == pytest.approx(expected["loss"], rel=1e-5)
    kept = metrics(save_dir / "metrics.jsonl")
    assert [(r["kind"], r["update"]) for r in kept] == [("train", 3), ("train", 6), ("valid", 6), ("train", 9),
                                                        ("train", 12), ("valid", 12)]


def test_train_errors(toy: Path, data: dict) -> None:
    def train(**kwargs):
        return csan.train(kwargs.pop("recipe", RECIPE), save_dir=toy / "ckpt-errors", **{"data": data["py"],
                                                                                        **kwargs})

    with pytest.raises(csan.BadOptionError, match=r"^--set: unknown key 'optimization\.lrr' "
                                                  r"\(did you mean 'optimization\.lr'\?\)$"):
        train(overrides={"optimization.lrr": 1})
    with pytest.raises(csan.BadOptionError, match=r"^--set optimization\.lr: key 'optimization\.lr': expected"):
        train(overrides={"optimization.lr": "fast"})
    with pytest.raises(csan.MissingFileError, match=r"nowhere: no such data directory$"):
        train(data=toy / "nowhere")
    with pytest.raises(csan.MissingFileError, match=r"no-recipe\.yaml: cannot open"):
        train(recipe=toy / "no-recipe.yaml")
    with pytest.raises(csan.BadOptionError, match=r"distributed_world_size 2 .*csan-train only"):
        train(overrides={"distributed_training.distributed_world_size": 2})
    with pytest.raises(TypeError, match="^seed: an int is expected, not str$"):
        train(seed="3")
    with pytest.raises(csan.BadOptionError,
                       match=r"^key 'checkpoint\.restore_file': .*missing\.pt: no such checkpoint$"):
        train(restore_file=toy / "missing.pt")
    # The fine-tuning, restart and EMA flags reach csan-train's keys.
    with pytest.raises(csan.BadOptionError, match=r"^key 'checkpoint\.finetune_from_model': .*missing\.pt: no such"):
        train(finetune_from_model=toy / "missing.pt")
    with pytest.raises(csan.BadOptionError, match=r"'checkpoint\.finetune_from_model': .* and "
                                                  r"checkpoint\.reset_meters exclude each other"):
        train(finetune_from_model=toy / "missing.pt", reset_meters=True)
    with pytest.raises(csan.BadOptionError, match=r"^key 'ema\.validate_with_ema': needs ema\.store_ema"):
        train(validate_with_ema=True)
    with pytest.raises(TypeError, match="^reset_optimizer: a bool is expected, not int$"):
        train(reset_optimizer=1)
    with pytest.raises(csan.BadOptionError, match=r"^missing --data DIR \(the output directory of csan-preprocess\)$"):
        train(data=None)
    assert not (toy / "ckpt-errors").exists()  # a failed start leaves nothing behind


def test_preprocess_errors(toy: Path) -> None:
    with pytest.raises(csan.BadOptionError, match="^unrecognised option '--no-such-option'$"):
        csan.preprocess(trainpref=toy / "raw/train", destdir=toy / "bin-x", no_such_option=1, **PREPROCESS)
    with pytest.raises(csan.BadOptionError, match="^--tag-column: not an option of --task translation$"):
        csan.preprocess(trainpref=toy / "raw/train", destdir=toy / "bin-x", tag_column="upos", **PREPROCESS)
    known = "multilingual_translation, tagging, translation"
    with pytest.raises(csan.BadOptionError, match=f"^unknown task 'parsing'; known: {known}$"):
        csan.preprocess("parsing", trainpref=toy / "raw/train")
    with pytest.raises(csan.MissingFileError, match="missing.src"):
        csan.preprocess(trainpref=toy / "missing", destdir=toy / "bin-x", **PREPROCESS)
    with pytest.raises(TypeError, match="^workers: a str, number, bool or list is expected, not dict$"):
        csan.preprocess(workers={}, **{k: v for k, v in PREPROCESS.items() if k != "workers"})
    assert not (toy / "bin-x").exists()


def test_an_on_log_exception_ends_the_run_and_propagates(toy: Path, data: dict) -> None:
    def fail(record: dict) -> None:
        raise ValueError(f"stop at {record['update']}")

    previous = signal.getsignal(signal.SIGINT)
    with pytest.raises(ValueError, match="^stop at 3$"):
        csan.train(RECIPE, data=data["py"], save_dir=toy / "ckpt-raise", on_log=fail, **FLAGS)
    assert signal.getsignal(signal.SIGINT) is previous
    # The save dir is not left locked: a second run goes ahead.
    assert csan.train(RECIPE, data=data["py"], save_dir=toy / "ckpt-raise", **{**FLAGS, "max_update": 3}).records
