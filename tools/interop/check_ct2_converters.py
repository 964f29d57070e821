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
    # torch.load(weights_only=True) refuses the pickled Namespace (torch 1.13 already stops at
    # the config's floats); CTranslate2 needs --unsafe_deserialization for fairseq checkpoints.
    "fairseq checkpoint with cfg.model a Namespace, default weights_only loading":
        "Weights only load failed",
    # FairseqConverter._load assigns args.data: cfg.model must be an object, not a dict.
    "fairseq checkpoint with cfg.model a plain dict": "has no attribute",
    # The smallest form an exporter writes for CTranslate2 (FORMATS.md 6(b)).
    "fairseq checkpoint with the minimal cfg, model a Namespace": True,
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
    convert_state("fairseq checkpoint with cfg.model a plain dict", plain, folder, results)


def convert_state(name, state, folder, results):
    """Saves a checkpoint dict and runs the fairseq converter on it, unpickling allowed."""
    import torch
    from ctranslate2.converters.fairseq import FairseqConverter
    with tempfile.TemporaryDirectory(prefix="csan-ct2-state-") as tmp:
        path = Path(tmp) / "checkpoint.pt"
        torch.save(state, path)
        run(name, lambda out: FairseqConverter(str(path), str(folder), source_lang="en",
                                               target_lang="de", unsafe_deserialization=True
                                               ).convert(out, force=True), results)


def minimal_namespace_case(results):
    """FORMATS.md 6(a)'s minimal checkpoint with cfg["model"] an argparse.Namespace holding the
    minimal keys plus arch, task and languages."""
    import argparse as ap
    import torch
    import make_fairseq_fixtures as fx
    folder = common.FIXTURES / "fairseq" / "transformer_iwslt_prenorm_learned"
    state = torch.load(folder / "checkpoint.pt", map_location="cpu")
    args = state["cfg"]["model"]
    minimal = fx.minimal_plain_state(args, folder, _StateOnly(state["model"]))
    model = dict(minimal["cfg"]["model"])
    minimal["cfg"]["model"] = ap.Namespace(**model, arch=model["_name"], task="translation",
                                           source_lang="en", target_lang="de", data=".")
    convert_state("fairseq checkpoint with the minimal cfg, model a Namespace", minimal, folder,
                  results)


class _StateOnly:
    """Stands for a model where only state_dict() is read."""

    def __init__(self, state):
        self._state = state

    def state_dict(self):
        return self._state


def marian_cases(results):
    from ctranslate2.converters.transformers import TransformersConverter

    class Converter(TransformersConverter):
        """CTranslate2 4.8 passes from_pretrained(dtype=...), the name transformers uses since
        4.56; the transformers run here (4.48) calls it torch_dtype."""

        def load_model(self, model_class, model_name_or_path, **kwargs):
            kwargs["torch_dtype"] = kwargs.pop("dtype", None)
            return super().load_model(model_class, model_name_or_path, **kwargs)

    run("marian (transformers directory)",
        lambda out: Converter(str(common.FIXTURES / "marian")).convert(out, force=True), results)


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
    minimal_namespace_case(results)
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
