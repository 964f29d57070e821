"""csan.Translator against csan-generate on a toy model trained for the session: the same
translations in every precision, for ensembles and n-best lists; forced-decoding scores
that reproduce the search's; several Python threads at once; translate_file; and every
bad input as a csan.Error subclass with csan's one-line message."""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import csan

BUILD = Path(os.environ.get("CSAN_BUILD_DIR", Path(__file__).resolve().parents[2] / "build"))
BIN = Path(os.environ.get("CSAN_BIN_DIR", BUILD / "cli"))
SENTENCES = 60


def run(*command: object) -> str:
    done = subprocess.run([str(c) for c in command], capture_output=True, text=True)
    assert done.returncode == 0, f"{command[0]}: exit {done.returncode}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="session")
def model(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """A tiny Transformer trained briefly on the toy corpus (SentencePiece, joint dictionary),
    its last two epochs' checkpoints (an ensemble) and raw test sentences."""
    root = tmp_path_factory.mktemp("toy")
    run(BUILD / "tools" / "csan-toy-corpus", "--out-dir", root / "raw", "--train", "2000", "--valid", "50",
        "--test", str(SENTENCES), "--seed", "3", "--max-words", "8")
    run(BIN / "csan-preprocess", "--source-lang", "src", "--target-lang", "tgt", "--trainpref", root / "raw/train",
        "--validpref", root / "raw/valid", "--testpref", root / "raw/test", "--destdir", root / "bin",
        "--joined-dictionary", "--spm-vocab-size", "200", "--workers", "1")
    recipe = Path(__file__).resolve().parents[2] / "recipes" / "tiny-transformer.yaml"
    run(BIN / "csan-train", recipe, "--data", root / "bin", "--save-dir", root / "ckpt", "--max-epoch", "3",
        "--max-tokens", "1024", "--set", "lr_scheduler.warmup_updates=30")
    lines = (root / "raw" / "test.src").read_text(encoding="utf-8").splitlines()
    lines[7] = ""  # an empty input translates to nothing
    (root / "input.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return {"dir": root, "last": root / "ckpt/checkpoint_last.pt", "epoch2": root / "ckpt/checkpoint2.pt",
            "input": root / "input.txt", "lines": lines}


def generate(checkpoints: list, input_path: Path, *options: str) -> list:
    out = run(BIN / "csan-generate", "--path", ":".join(str(c) for c in checkpoints), "--input", input_path,
              "--output-format", "plain", *options)
    return out.split("\n")[:-1]


@pytest.mark.parametrize("precision", ["fp32", "bf16", "int8"])
def test_translations_equal_csan_generate(model: dict, precision: str) -> None:
    translator = csan.Translator(model["last"], precision=precision)
    assert translator.precision == precision
    assert (translator.source_language, translator.target_language, translator.device) == ("src", "tgt", "cpu")
    expected = generate([model["last"]], model["input"], "--precision", precision)
    assert translator.translate(model["lines"]) == expected
    assert expected[7] == ""


def test_ensemble_and_search_options_equal_csan_generate(model: dict) -> None:
    paths = [model["last"], model["epoch2"]]
    translator = csan.Translator(paths)
    options = ["--beam", "3", "--lenpen", "0.6", "--max-len-b", "12", "--no-repeat-ngram-size", "2"]
    got = translator.translate(model["lines"], beam=3, lenpen=0.6, max_len_b=12, no_repeat_ngram_size=2)
    assert got == generate(paths, model["input"], *options)
    # An ensemble translates differently from either member (else this test proves nothing).
    assert got != csan.Translator(paths[0]).translate(model["lines"], beam=3, lenpen=0.6, max_len_b=12,
                                                       no_repeat_ngram_size=2)


def test_n_best_and_scores_equal_csan_generate(model: dict) -> None:
    translator = csan.Translator(model["last"])
    hyps = translator.translate(model["lines"][:10], n_best=3, return_scores=True)
    out = run(BIN / "csan-generate", "--path", model["last"], "--input", model["input"], "--nbest", "3")
    by_id: dict = {}
    for line in out.splitlines():
        if line.startswith("D-"):
            key, score, text = line.split("\t")
            by_id.setdefault(int(key[2:]), []).append((float(score), text))
    for i, sentence in enumerate(hyps):
        if i == 7:
            assert sentence == []
            continue
        assert [h.text for h in sentence] == [t for _, t in by_id[i]]
        # csan-generate prints fairseq's base-2 scores; the API keeps natural logs.
        assert [h.score / math.log(2) for h in sentence] == pytest.approx([s for s, _ in by_id[i]], abs=1e-5)
        assert len(sentence[0].positional_scores) == len(sentence[0].tokens)
    texts = translator.translate(model["lines"][:10], n_best=3)
    assert texts == [[h.text for h in sentence] for sentence in hyps]


def test_forced_decoding_reproduces_the_search_scores(model: dict) -> None:
    translator = csan.Translator([model["last"], model["epoch2"]])
    sources = [line for line in model["lines"] if line][:20]
    best = [h[0] for h in translator.translate(sources, beam=4, return_scores=True)]
    targets = [h.text for h in best]
    details = translator.score(sources, targets, return_details=True)
    # Where the detokenized text encodes back to the search's tokens (SentencePiece may
    # segment it otherwise), forced decoding gives the search's own log-probabilities.
    same = [(hyp, d) for hyp, d in zip(best, details) if list(d.tokens) == list(hyp.tokens)]
    assert len(same) >= len(best) // 2
    for hyp, d in same:
        assert list(d.positional_scores) == pytest.approx(hyp.positional_scores, abs=1e-4)
        assert d.log_probability == pytest.approx(sum(hyp.positional_scores), abs=1e-3)
    totals = translator.score(sources, targets)
    assert totals == [d.log_probability for d in details]
    # Another target of the same source is less likely under the model than its best one.
    # Per token, another sentence's translation is less likely than the source's own (for most
    # sentences: the fixture model trains for seconds, and which BLAS kernels train it, e.g.
    # OpenBLAS's AVX2 or AVX-512 ones, moves a few of 20 either way; chance would give half).
    worse = translator.score(sources, targets[1:] + targets[:1], return_details=True)
    per_token = [d.log_probability / len(d.tokens) for d in details]
    worse_per_token = [d.log_probability / len(d.tokens) for d in worse]
    assert sum(w < t for w, t in zip(worse_per_token, per_token)) >= 0.7 * len(per_token)
    assert sum(worse_per_token) < sum(per_token)


def test_threads_translate_as_one_call_does(model: dict) -> None:
    translator = csan.Translator(model["last"], precision="int8")
    lines = model["lines"]
    expected = translator.translate(lines)
    results: dict = {}
    errors: list = []

    def work(k: int) -> None:
        try:
            for _ in range(3):
                results[k] = translator.translate(lines[k::4])
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    for k in range(4):
        assert results[k] == expected[k::4]


def test_translate_file_streams_and_keeps_the_old_output_on_error(model: dict, tmp_path: Path) -> None:
    translator = csan.Translator(model["last"])
    out = tmp_path / "out.txt"
    assert translator.translate_file(model["input"], out, progress=False, beam=2) == len(model["lines"])
    assert out.read_text(encoding="utf-8").split("\n")[:-1] == translator.translate(model["lines"], beam=2)
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"ein haus\nzwei \xff katzen\n")
    before = out.read_bytes()
    with pytest.raises(csan.BadInputError, match=r"bad\.txt:2: invalid UTF-8"):
        translator.translate_file(bad, out, progress=False)
    assert out.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.txt", "out.txt"]  # no temporary left


def test_errors_are_csan_errors_with_one_line_messages(model: dict, tmp_path: Path) -> None:
    def one_line(excinfo: pytest.ExceptionInfo) -> str:
        message = str(excinfo.value)
        assert "\n" not in message
        return message

    with pytest.raises(csan.MissingFileError) as e:
        csan.Translator(tmp_path / "nothing.pt")
    assert "nothing.pt: no such checkpoint" in one_line(e)
    truncated = tmp_path / "truncated.pt"
    truncated.write_bytes(model["last"].read_bytes()[:5000])
    with pytest.raises(csan.CorruptCheckpointError) as e:
        csan.Translator(truncated)
    assert "truncated.pt" in one_line(e)
    with pytest.raises(csan.BadOptionError, match="precision: unknown value 'int4'"):
        csan.Translator(model["last"], precision="int4")
    with pytest.raises(csan.BadOptionError, match="device: unknown value 'tpu'"):
        csan.Translator(model["last"], device="tpu")
    # A translation checkpoint translates its own pair only.
    with pytest.raises(csan.BadOptionError, match=r"target_lang: 'de' but .* translates src -> tgt$"):
        csan.Translator(model["last"], target_lang="de")
    translator = csan.Translator(model["last"])
    with pytest.raises(csan.BadOptionError, match="--beam"):
        translator.translate(["ein haus"], beam=0)
    with pytest.raises(csan.BadOptionError, match="--nbest"):
        translator.translate(["ein haus"], beam=2, n_best=3)
    with pytest.raises(csan.BadInputError, match="2 sources but 1 targets"):
        translator.score(["a", "b"], ["c"])
    with pytest.raises(TypeError, match="a list of sentences"):
        translator.translate("ein haus")
    with pytest.raises(TypeError, match=r"sentences\[1\]: a str"):
        translator.translate(["ein haus", 3])


def test_translator_after_import_torch(model: dict) -> None:
    """Debian's python3-torch and csan's models in one interpreter, torch imported first."""
    code = ("import torch, csan; t = csan.Translator(%r); print(t.translate(['ein haus'])[0] != None); "
            "print(torch.ones(2).sum().item())") % str(model["last"])
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    if done.returncode != 0 and "No module named 'torch'" in done.stderr:
        pytest.skip("python3-torch is not installed")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "2.0"]


def test_misspelt_kernel_switch_is_a_bad_option_naming_it(model: dict) -> None:
    """CSAN_SGEMM and CSAN_INT8_KERNEL (core/kernel_switches.h) are checked when the first
    model loads: a misspelt value would otherwise time the default kernel under its name."""
    code = ("import csan\ntry:\n    csan.Translator(%r)\nexcept csan.BadOptionError as e:\n    print(e)") % str(model["last"])
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "CSAN_INT8_KERNEL": "vnni"})
    assert done.returncode == 0, done.stderr
    assert done.stdout == "environment variable CSAN_INT8_KERNEL: 'vnni' is not one of csan, libtorch\n"


def test_imported_marian_model_translates_as_transformers(tmp_path: Path) -> None:
    """The MarianMT fixture (made with transformers' code) through csan-import --marian: the
    Translator with transformers' search rules gives generate()'s texts and scores."""
    fixture = Path(__file__).resolve().parents[2] / "tests" / "data" / "interop" / "marian"
    shared = Path(os.environ.get("CSAN_SHARED_DIR", Path(__file__).resolve().parents[3] / "shared"))
    source = shared / "data" / "multi30k" / "test2016.en"
    if not source.is_file():
        pytest.skip(f"no Multi30k under {shared}")
    run(BIN / "csan-import", "--marian", fixture, "--output", tmp_path / "marian.pt")
    lines = source.read_text(encoding="utf-8").splitlines()[:200]
    translator = csan.Translator(tmp_path / "marian.pt")
    got = translator.translate(lines, beam=5, max_len_a=0.5, max_len_b=4, min_len=0, transformers_beam=True,
                               return_scores=True)
    assert [hyps[0].text for hyps in got] == (fixture / "hyp.txt").read_text(encoding="utf-8").splitlines()
    scores = [float(s) for s in (fixture / "hyp.scores.txt").read_text().split()]
    assert [hyps[0].score for hyps in got] == pytest.approx(scores, abs=1e-4)


def test_multilingual_checkpoint_translates_the_given_pair(tmp_path: Path) -> None:
    """A multilingual checkpoint (a tiny decoder-style model trained 1 update on two pairs)
    translates the pair given as source_lang/target_lang as csan-generate
    --source-lang/--target-lang does, and its forced decoding is steered alike; a missing or
    unknown pair is a one-line BadOptionError."""
    run(BUILD / "tools" / "csan-toy-corpus", "--out-dir", tmp_path / "raw", "--train", "200", "--valid", "10",
        "--test", "6", "--seed", "3", "--max-words", "5", "--second-target-lang", "tgu")
    run(BIN / "csan-preprocess", "--task", "multilingual_translation", "--lang-pairs", "src-tgt,src-tgu",
        "--trainpref", tmp_path / "raw/train", "--destdir", tmp_path / "bin", "--spm-vocab-size", "150")
    recipe = Path(__file__).resolve().parents[2] / "recipes" / "tiny-transformer.yaml"
    run(BIN / "csan-train", recipe, "--set", "task.name=multilingual_translation", "--lang-pairs", "src-tgt,src-tgu",
        "--lang-tok-style", "decoder", "--data", tmp_path / "bin", "--save-dir", tmp_path / "ckpt", "--max-update",
        "1", "--max-tokens", "1024", "--set", "dataset.disable_validation=true")
    checkpoint = tmp_path / "ckpt/checkpoint_last.pt"
    source = tmp_path / "raw/test.src-tgt.src"
    lines = source.read_text(encoding="utf-8").splitlines()
    best = {}
    for target in ("tgt", "tgu"):
        translator = csan.Translator(checkpoint, source_lang="src", target_lang=target)
        assert (translator.source_language, translator.target_language) == ("src", target)
        best[target] = [h[0] for h in translator.translate(lines, max_len_a=0, max_len_b=6, return_scores=True)]
        # The decoder starts from the language token in forced decoding too: the search's
        # own log-probabilities where the text encodes back to the search's tokens.
        details = translator.score(lines, [h.text for h in best[target]], return_details=True)
        same = [(h, d) for h, d in zip(best[target], details) if list(d.tokens) == list(h.tokens)]
        assert same
        for hyp, d in same:
            assert list(d.positional_scores) == pytest.approx(hyp.positional_scores, abs=1e-4)
    assert [h.text for h in best["tgu"]] == generate([checkpoint], source, "--source-lang", "src", "--target-lang",
                                                     "tgu", "--max-len-a", "0", "--max-len-b", "6")
    # The other pair's token reaches the model (an untrained one may say the same words).
    assert [h.score for h in best["tgt"]] != [h.score for h in best["tgu"]]
    with pytest.raises(csan.BadOptionError, match=r"^source_lang: required for a multilingual model \(.*src-tgt,src-tgu\)$"):
        csan.Translator(checkpoint)
    with pytest.raises(csan.BadOptionError, match=r"^source_lang/target_lang: tgt-tgu is not a pair of "):
        csan.Translator(checkpoint, source_lang="tgt", target_lang="tgu")
