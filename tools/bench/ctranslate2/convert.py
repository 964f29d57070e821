#!/usr/bin/python3
"""A csan Transformer as CTranslate2 models, converted the way a user converts one:
`csan-export --to fairseq`, then CTranslate2's own fairseq converter (ct2-fairseq-converter's
FairseqConverter) on the exported folder, once per quantization.

  convert.py --checkpoint CKPT --output-dir OUT --fairseq-src DIR [--quantization float32 int8]

Writes OUT/fairseq (the export), OUT/<quantization> (one CTranslate2 model each) and
OUT/spm.model. The converter builds the model with fairseq's code, so DIR is a fairseq source
tree (facebookresearch/fairseq; fairseq itself is not installed here), imported with the stubs
of tools/interop (see tools/interop/README.md). Run with Debian's /usr/bin/python3 and
CTranslate2 importable (run.sh sets PYTHONPATH and LD_LIBRARY_PATH from build.sh's folder)."""

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tools" / "interop"))


def fail(message):
    sys.exit(f"convert.py: {message}")


def export(build, checkpoint, folder):
    command = [str(build / "cli" / "csan-export"), "--path", str(checkpoint), "--to", "fairseq",
               "--out", str(folder), "--force"]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        fail(f"csan-export failed: {done.stderr.strip()}")


def languages(folder):
    """The pair from the exported dict.<lang>.txt files (one file when both sides share it)."""
    langs = sorted(p.name[len("dict."):-len(".txt")] for p in folder.glob("dict.*.txt"))
    if len(langs) != 2:
        fail(f"{folder}: expected dict.<src>.txt and dict.<tgt>.txt, found {langs}")
    import torch
    cfg = torch.load(folder / "checkpoint.pt", map_location="cpu")["cfg"]["model"]
    source, target = getattr(cfg, "source_lang", None), getattr(cfg, "target_lang", None)
    if {source, target} != set(langs):
        fail(f"{folder}/checkpoint.pt: source_lang/target_lang {source}/{target} do not match {langs}")
    return source, target


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", required=True, type=Path)
    parser.add_argument("--output-dir", required=True, type=Path)
    parser.add_argument("--fairseq-src", required=True, type=Path)
    parser.add_argument("--quantization", nargs="+", default=["float32", "int8"])
    parser.add_argument("--csan-build", type=Path, default=ROOT / "build")
    args = parser.parse_args()
    if not (args.fairseq_src / "fairseq" / "models" / "transformer").is_dir():
        fail(f"--fairseq-src {args.fairseq_src}: not a fairseq source tree")
    out = args.output_dir
    out.mkdir(parents=True, exist_ok=True)
    exported = out / "fairseq"
    export(args.csan_build, args.checkpoint, exported)
    source, target = languages(exported)

    import make_fairseq_fixtures
    make_fairseq_fixtures.import_fairseq(args.fairseq_src.resolve())
    from ctranslate2.converters.fairseq import FairseqConverter
    for quantization in args.quantization:
        # The exported settings are an argparse.Namespace, as fairseq writes them: CTranslate2
        # loads them only with unpickling allowed (its --unsafe_deserialization).
        converter = FairseqConverter(str(exported / "checkpoint.pt"), str(exported), source_lang=source,
                                     target_lang=target, unsafe_deserialization=True)
        converter.convert(str(out / quantization), quantization=quantization, force=True)
        print(f"wrote {out / quantization}", file=sys.stderr)
    spm = sorted(exported.glob("spm*.model"))
    if len(spm) != 1:
        fail(f"{exported}: the benchmark needs one SentencePiece model for both sides, found {len(spm)}")
    shutil.copyfile(spm[0], out / "spm.model")


if __name__ == "__main__":
    main()
