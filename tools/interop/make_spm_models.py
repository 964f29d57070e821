#!/usr/bin/python3
"""Trains the SentencePiece models every interop fixture uses (tests/data/interop/spm/en.model,
de.model: unigram, 200 pieces each, on Multi30k's training text) with python3-sentencepiece.

  make_spm_models.py            (re)write them
  make_spm_models.py --check    retrain in a scratch folder and require identical bytes"""

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import interop_common as common  # noqa: E402


def build(out):
    import sentencepiece
    for lang in ("en", "de"):
        common.train_spm(common.MULTI30K / f"train.{lang}", out, lang)
    common.write_manifest(out, {"library": "sentencepiece", "version": sentencepiece.__version__,
                                "vocab_size": common.SPM_VOCAB, "model_type": "unigram",
                                "normalization": "identity",
                                "trained_on": "multi30k train.en / train.de"})


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="retrain in a scratch folder and compare with the stored models")
    opts = parser.parse_args()
    common.build_then_compare(build, common.FIXTURES / "spm", opts.check)


if __name__ == "__main__":
    main()
