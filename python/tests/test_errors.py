"""Bad input to csan.metrics raises the right exception with a message naming the
argument, never crashes the interpreter, and csan's C++ errors map to csan.errors."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import csan
from csan.metrics import BLEU, CHRF, TER, corpus_bleu, corpus_chrf, corpus_ter, sentence_bleu

HYPS = ["the cat sat", "a dog ran"]
REFS = [["the cat sat down", "the dog ran"]]


def test_hierarchy() -> None:
    assert issubclass(csan.BadOptionError, csan.Error) and issubclass(csan.BadOptionError, ValueError)
    assert issubclass(csan.BadInputError, csan.Error) and issubclass(csan.BadInputError, ValueError)
    assert issubclass(csan.MissingFileError, csan.Error) and issubclass(csan.MissingFileError, FileNotFoundError)
    assert issubclass(csan.CorruptCheckpointError, csan.Error)
    assert csan.errors.__all__ == ["Error", "BadOptionError", "BadInputError", "MissingFileError", "CorruptCheckpointError"]


@pytest.mark.parametrize(
    "hyps, refs, message",
    [
        ("the cat sat", REFS, r"hypotheses: expected a sequence of str, got a single str"),
        (["the cat sat", 3], REFS, r"hypotheses\[1\]: expected str, got int"),
        (["the cat sat", None], REFS, r"hypotheses\[1\] is None, expected str"),
        (5, REFS, r"hypotheses: expected a sequence of str, got int"),
        (HYPS, ["the cat sat down", "the dog ran"], r"references\[0\]: expected a sequence of str .*got a single str"),
        (HYPS, [["the cat sat down", b"the dog ran"]], r"references\[0\]\[1\]: expected str, got bytes"),
        (HYPS, "refs", r"references: expected a sequence of reference streams"),
    ],
)
def test_wrong_types(hyps: object, refs: object, message: str) -> None:
    for score in (corpus_bleu, corpus_chrf, corpus_ter):
        with pytest.raises(TypeError, match=message):
            score(hyps, refs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "hyps, refs, message",
    [
        (HYPS, [["only one"]], "hypotheses have 2 segments, references 1"),
        (HYPS, [["a", "b"], ["c"]], r"references\[1\] has 1 segments, references\[0\] has 2"),
        ([], [[]], "no hypotheses to score"),
        (HYPS, [["a", None], ["b", None]], "segment 2 has no reference"),
        (["fine", "bad \udcff"], [["a", "b"]], r"hypotheses\[1\]: cannot be encoded as UTF-8"),
        (HYPS, [["a", "\ud800"]], r"references\[0\]\[1\]: cannot be encoded as UTF-8"),
    ],
)
def test_bad_input(hyps: list, refs: list, message: str) -> None:
    for score in (corpus_bleu, corpus_chrf, corpus_ter):
        with pytest.raises(csan.BadInputError, match=message):
            score(hyps, refs)


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: BLEU(tokenize="ja-mecab"), "unknown tokenizer 'ja-mecab'"),
        (lambda: BLEU(trg_lang="ko"), "unknown tokenizer 'ko-mecab'"),
        (lambda: BLEU(tokenize="moses"), "unknown tokenizer 'moses'"),
        (lambda: BLEU(smooth_method="laplace"), "unknown BLEU smoothing method 'laplace'"),
        (lambda: BLEU(max_ngram_order=3), "max_ngram_order: csan computes BLEU on 1- to 4-grams only"),
        (lambda: CHRF(char_order=0, word_order=0), "positive character or word n-gram order"),
    ],
)
def test_bad_options(make, message: str) -> None:
    with pytest.raises(csan.BadOptionError, match=message):
        make()


def test_sentencepiece_models(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SACREBLEU", str(tmp_path))  # sacreBLEU's model folder: empty
    with pytest.raises(csan.BadOptionError, match="needs a SentencePiece model file"):
        BLEU(tokenize="flores200")
    missing = tmp_path / "missing.model"
    with pytest.raises(csan.MissingFileError, match=f"{missing}: SentencePiece model file not found"):
        BLEU(tokenize="spm", spm_model=str(missing))
    with pytest.raises(FileNotFoundError):
        BLEU(tokenize="spm", spm_model=str(missing))
    not_a_model = tmp_path / "text.model"
    not_a_model.write_text("not a model\n")
    with pytest.raises(csan.BadInputError, match="cannot load SentencePiece model"):
        BLEU(tokenize="spm", spm_model=str(not_a_model))


def test_usage_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(csan.BadOptionError, match="Number of references unknown"):
        BLEU().get_signature()
    with pytest.raises(csan.BadOptionError, match="no references given and none cached"):
        TER().corpus_score(HYPS, None)
    score = corpus_bleu(HYPS, REFS)
    with pytest.raises(csan.BadOptionError, match="--width must not be negative"):
        score.format(width=-1)
    with pytest.raises(csan.BadOptionError, match="n_bootstrap: expected 1 to 10000000"):
        BLEU().corpus_score(HYPS, REFS, n_bootstrap=10**8)
    monkeypatch.setenv("SACREBLEU_SEED", "-3")
    with pytest.raises(csan.BadOptionError, match="SACREBLEU_SEED: expected a non-negative integer or 'none', got '-3'"):
        BLEU().corpus_score(HYPS, REFS, n_bootstrap=10)
    with pytest.raises(TypeError, match="hypothesis: expected str, got list"):
        sentence_bleu(["a"], ["a"])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="references: expected a sequence of str, got str"):
        sentence_bleu("a", "a")


def test_errors_do_not_break_the_interpreter() -> None:
    """A fresh interpreter keeps working after each kind of failure."""
    script = (
        "import csan\n"
        "from csan.metrics import corpus_bleu, BLEU\n"
        "for bad in [lambda: corpus_bleu(['a'], [['a', 'b']]), lambda: BLEU(tokenize='x'), "
        "lambda: corpus_bleu(['\\udcff'], [['a']]), lambda: corpus_bleu([1], [['a']])]:\n"
        "    try:\n"
        "        bad()\n"
        "    except (csan.Error, TypeError) as e:\n"
        "        print(type(e).__name__)\n"
        "print(corpus_bleu(['a b c d'], [['a b c d']]).score)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=os.environ, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["BadInputError", "BadOptionError", "BadInputError", "TypeError", "100.00000000000004"]
