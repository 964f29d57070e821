"""csan and Debian's torch (python3-torch) share one interpreter, imported in either
order, with csan's SentencePiece tokenizer (libsentencepiece) at work beside LibTorch.

(So far the package holds only the scorer; this guards the import order as LibTorch
joins the package.)"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from csan.metrics import BLEU
from sacrebleu_vectors import lines

pytestmark = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="python3-torch is not installed")

HYPS = list(lines("de500", "sys_c.de", True))
REFS = list(lines("de500", "ref.de", True))


def run(script: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", script, *args], capture_output=True, text=True, env=os.environ, timeout=300
    )


@pytest.fixture(scope="module")
def spm_model(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A small SentencePiece model, trained in its own process by python3-sentencepiece."""
    if importlib.util.find_spec("sentencepiece") is None:
        pytest.skip("python3-sentencepiece is not installed")
    folder = tmp_path_factory.mktemp("spm")
    corpus = folder / "corpus.txt"
    corpus.write_text("\n".join(REFS) + "\n", encoding="utf-8")
    prefix = folder / "tiny"
    train = (
        "import sys, sentencepiece\n"
        "sentencepiece.SentencePieceTrainer.train(input=sys.argv[1], model_prefix=sys.argv[2], vocab_size=300,"
        " minloglevel=2)\n"
    )
    done = run(train, str(corpus), str(prefix))
    assert done.returncode == 0, done.stderr
    return str(Path(str(prefix) + ".model"))


WORK = (
    "import sys, json\n"
    "import csan.metrics as m\n"
    "hyps, refs = json.load(open(sys.argv[2], encoding='utf-8'))\n"
    "print(repr(m.BLEU(tokenize='spm', spm_model=sys.argv[1]).corpus_score(hyps, [refs]).score))\n"
    "print(float(torch.ones(3).sum()))\n"
)


@pytest.mark.parametrize(
    "first", ["import torch\nimport csan\n", "import csan\nimport torch\n"], ids=["torch_first", "csan_first"]
)
def test_import_order(first: str, spm_model: str, tmp_path: Path) -> None:
    data = tmp_path / "data.json"
    data.write_text(json.dumps([HYPS, REFS]), encoding="utf-8")
    expected = BLEU(tokenize="spm", spm_model=spm_model).corpus_score(HYPS, [REFS]).score
    done = run(first + WORK, spm_model, str(data))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [repr(expected), "3.0"]
