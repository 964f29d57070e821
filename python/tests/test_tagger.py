"""csan.Tagger against csan-generate on a tiny tagger trained on the toy treebank (through
csan.preprocess and csan.train, checked against csan-preprocess): the same CoNLL-U output
byte for byte, the same tags from word lists, an ensemble, and bad inputs as csan.Error
subclasses with csan's one-line messages."""

from __future__ import annotations

import filecmp
import os
import subprocess
from pathlib import Path

import pytest

import csan

BUILD = Path(os.environ.get("CSAN_BUILD_DIR", Path(__file__).resolve().parents[2] / "build"))
BIN = Path(os.environ.get("CSAN_BIN_DIR", BUILD / "cli"))
RECIPE = Path(__file__).resolve().parents[2] / "recipes" / "tagger-conv2d.yaml"
SMALL = {"model.tagger.word_dim": 16, "model.tagger.char_dim": 8, "model.tagger.char_filters": 8,
         "model.tagger.layers": 2, "model.tagger.heads": 2, "optimization.lr": 0.005, "dataset.max_sentences": 16,
         "checkpoint.no_epoch_checkpoints": False}


def run(*command: object) -> subprocess.CompletedProcess:
    done = subprocess.run([str(c) for c in command], capture_output=True, text=True)
    assert done.returncode == 0, f"{command[0]}: exit {done.returncode}\n{done.stderr}"
    return done


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("treebank")
    tb = root / "treebank"
    run(BUILD / "tools" / "csan-toy-treebank", "--out-dir", tb, "--train", "150", "--dev", "30", "--test", "40",
        "--seed", "7")
    prefixes = {"trainpref": tb / "train", "validpref": tb / "dev", "testpref": tb / "test"}
    run(BIN / "csan-preprocess", "--task", "tagging", "--vocab-protocol", "convatt", "--destdir", root / "bin-cli",
        *[a for k, v in prefixes.items() for a in (f"--{k}", v)])
    csan.preprocess("tagging", vocab_protocol="convatt", destdir=root / "bin", **prefixes)
    csan.train(RECIPE, data=root / "bin", save_dir=root / "ckpt", overrides=SMALL, seed=3, max_epoch=2,
               log_interval=5)
    return {"root": root, "test": tb / "test.conllu", "last": root / "ckpt/checkpoint_last.pt",
            "epoch1": root / "ckpt/checkpoint1.pt"}


def test_tagging_preprocess_writes_what_csan_preprocess_writes(model: dict) -> None:
    cli, py = model["root"] / "bin-cli", model["root"] / "bin"
    names = sorted(os.listdir(cli))
    assert names == sorted(os.listdir(py)) and len(names) > 5
    assert filecmp.cmpfiles(cli, py, names, shallow=False)[1:] == ([], [])


def test_tag_conllu_equals_csan_generate(model: dict, tmp_path: Path) -> None:
    tagger = csan.Tagger(model["last"])
    assert (tagger.column, tagger.device) == ("upos", "cpu")
    summary = tagger.tag_conllu(model["test"], tmp_path / "out.conllu", batch_size=7)
    expected = run(BIN / "csan-generate", "--path", model["last"], "--input", model["test"])
    assert (tmp_path / "out.conllu").read_text(encoding="utf-8") == expected.stdout
    assert f"; accuracy against the input's tags {summary.accuracy:.2f}" in expected.stderr
    assert summary.gold == summary.words > 100 and 0 < summary.correct <= summary.words


def words_and_tags(conllu: str) -> tuple:
    sentences, tags = [[]], [[]]
    for line in conllu.splitlines():
        if not line:
            sentences.append([])
            tags.append([])
        elif not line.startswith("#") and line.split("\t")[0].isdigit():
            sentences[-1].append(line.split("\t")[1])
            tags[-1].append(line.split("\t")[3])
    return [s for s in sentences if s], [t for t in tags if t]


def test_tag_and_ensembles_equal_csan_generate(model: dict) -> None:
    paths = [model["last"], model["epoch1"]]
    expected = run(BIN / "csan-generate", "--path", ":".join(map(str, paths)), "--input", model["test"]).stdout
    sentences, tags = words_and_tags(expected)
    assert csan.Tagger(paths).tag(sentences) == tags
    single = words_and_tags(run(BIN / "csan-generate", "--path", model["last"], "--input", model["test"]).stdout)[1]
    assert csan.Tagger(model["last"]).tag(sentences, batch_size=0) == single
    assert single != tags  # the ensemble tags otherwise (else this test proves nothing)
    assert csan.Tagger(model["last"]).tag([[], ["x"] * 150]) [0] == []


def test_tagger_errors(model: dict, tmp_path: Path) -> None:
    with pytest.raises(csan.MissingFileError, match="missing.pt"):
        csan.Tagger(tmp_path / "missing.pt")
    (tmp_path / "junk.pt").write_bytes(b"not a checkpoint" * 10)
    with pytest.raises(csan.CorruptCheckpointError, match="junk.pt"):
        csan.Tagger(tmp_path / "junk.pt")
    with pytest.raises(csan.BadOptionError, match="^device: unknown value 'tpu' \\(cpu or cuda\\)$"):
        csan.Tagger(model["last"], device="tpu")
    tagger = csan.Tagger(model["last"])
    with pytest.raises(TypeError, match="^sentences\\[1\\]: a list of words is expected, not a str$"):
        tagger.tag([["a"], "b c"])
    with pytest.raises(csan.BadOptionError, match="^batch_size: must not be negative$"):
        tagger.tag([["a"]], batch_size=-1)
    (tmp_path / "bad.conllu").write_text("1\tword\n\n", encoding="utf-8")
    (tmp_path / "out.conllu").write_text("kept\n", encoding="utf-8")
    with pytest.raises(csan.Error, match="bad.conllu:1: "):
        tagger.tag_conllu(tmp_path / "bad.conllu", tmp_path / "out.conllu")
    assert (tmp_path / "out.conllu").read_text() == "kept\n"  # nothing already written is lost
