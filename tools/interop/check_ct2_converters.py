#!/usr/bin/python3
"""Runs CTranslate2's own converters (python/ctranslate2/converters/fairseq.py and
transformers.py, pure Python) on the interop fixtures and on the forms an exporter might write,
and reports which are accepted. CTranslate2's compiled extension is not needed for converting:
the package's __init__ (which loads it) is bypassed and the converters' modules are imported
from the source folder.

  check_ct2_converters.py --ct2-src DIR --fairseq-src DIR --transformers-src DIR

Each case prints one line "ok" or "refused: <reason>"; the exit status is non-zero when a case
does not end as FORMATS.md says it does (EXPECTED below)."""

import argparse
import copy
import sys
import tempfile
import types
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import interop_common as common  # noqa: E402

# case -> expected outcome: True (converts) or the text its refusal must contain.
EXPECTED = {
    "fairseq transformer_postnorm_shared (as fairseq writes it)": True,
    "fairseq transformer_iwslt_prenorm_learned (as fairseq writes it)": True,
    "fairseq transformer_untied_noscale (as fairseq writes it)": True,
    "fairseq checkpoint with cfg.model a Namespace, default weights_only loading":
        "weights_only" if False else "Unpickl",
    "fairseq checkpoint with cfg.model a plain dict": "has no attribute",
    "marian (transformers directory)": True,
}


def import_ct2(src):
    package = Path(src) / "python" / "ctranslate2"
    if not (package / "converters" / "fairseq.py").is_file():
        common.fail(f"{src}: not a CTranslate2 source folder "
                    "(no python/ctranslate2/converters/fairseq.py)")
    module = types.ModuleType("ctranslate2")
    module.__path__ = [str(package)]
    sys.modules["ctranslate2"] = module


def run(name, convert, results):
    try:
        with tempfile.TemporaryDirectory(prefix="csan-ct2-") as out:
            convert(out)
        outcome = True
        print(f"{name}: ok")
    except Exception as e:  # noqa: BLE001  (any refusal is a result to report)
        outcome = f"{type(e).__name__}: {str(e).strip().splitlines()[-1]}"
        print(f"{name}: refused: {outcome}")
    results[name] = outcome


def fairseq_cases(results):
    import torch
    from ctranslate2.converters.fairseq import FairseqConverter
    root = common.FIXTURES / "fairseq"
    for variant in ("transformer_postnorm_shared", "transformer_iwslt_prenorm_learned",
                    "transformer_untied_noscale"):
        folder = root / variant
        run(f"fairseq {variant} (as fairseq writes it)",
            lambda out, f=folder: FairseqConverter(
                str(f / "checkpoint.pt"), str(f), source_lang="en", target_lang="de",
                unsafe_deserialization=True).convert(out, force=True), results)
    folder = root / "transformer_postnorm_shared"
    run("fairseq checkpoint with cfg.model a Namespace, default weights_only loading",
        lambda out: FairseqConverter(str(folder / "checkpoint.pt"), str(folder),
                                     source_lang="en", target_lang="de").convert(out, force=True),
        results)
    state = torch.load(folder / "checkpoint.pt", map_location="cpu")
    plain = copy.deepcopy(state)
    plain["cfg"]["model"] = dict(vars(plain["cfg"]["model"]))
    with tempfile.TemporaryDirectory(prefix="csan-ct2-plain-") as tmp:
        path = Path(tmp) / "checkpoint.pt"
        torch.save(plain, path)
        run("fairseq checkpoint with cfg.model a plain dict",
            lambda out: FairseqConverter(str(path), str(folder), source_lang="en",
                                         target_lang="de").convert(out, force=True), results)


def marian_cases(results):
    from ctranslate2.converters.transformers import TransformersConverter
    run("marian (transformers directory)",
        lambda out: TransformersConverter(str(common.FIXTURES / "marian")).convert(out, force=True),
        results)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ct2-src", required=True, type=Path)
    parser.add_argument("--fairseq-src", required=True, type=Path)
    parser.add_argument("--transformers-src", required=True, type=Path)
    opts = parser.parse_args()
    import make_fairseq_fixtures
    import transformers_env
    make_fairseq_fixtures.import_fairseq(opts.fairseq_src.resolve())
    transformers_env.import_transformers(opts.transformers_src)
    import_ct2(opts.ct2_src)
    results = {}
    fairseq_cases(results)
    marian_cases(results)
    wrong = [name for name, want in EXPECTED.items()
             if not (results.get(name) is True if want is True
                     else isinstance(results.get(name), str) and want in results[name])]
    print(f"CTranslate2 {common.git_commit(opts.ct2_src)}: {len(EXPECTED) - len(wrong)} of "
          f"{len(EXPECTED)} cases as FORMATS.md says")
    if wrong:
        common.fail("not as expected: " + "; ".join(wrong))


if __name__ == "__main__":
    main()
