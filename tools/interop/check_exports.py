#!/usr/bin/python3
"""Loads what csan-export writes with the libraries' own code and checks it against csan
(issue 37 part 4, export side):

  1. each fairseq fixture, imported by csan-import and exported again by csan-export --to
     fairseq, is loaded with fairseq's checkpoint_utils.load_model_ensemble_and_task and
     translated by its SequenceGenerator (beam 5, the first 200 lines of test2016.en): the ids
     must be the fixture's (which csan-generate reproduces, tests/cli/import_test.cpp), and the
     teacher-forced log-probs the fixture's within 1e-4;
  2. the MarianMT fixture, imported and exported by csan-export --to marian, is loaded with
     transformers' MarianMTModel / MarianTokenizer.from_pretrained and translated by generate():
     the same checks against the Marian fixture;
  3. a Transformer csan trained (tests/data/format2-tiny/checkpoint.pt) is exported to fairseq
     and translated by fairseq's SequenceGenerator; its ids must be csan-generate's on the
     original checkpoint, and they are stored in tests/data/interop/export/csan_tiny_fairseq/
     (with --write) so that ctest checks csan-generate against them on every run
     (tests/cli/export_test.cpp) without fairseq;
  4. CTranslate2's converters (fairseq.py with --unsafe_deserialization, transformers.py) are
     run on every exported folder; each must convert.

  check_exports.py --bin BUILD/cli --fairseq-src DIR --transformers-src DIR --ct2-src DIR [--write]

The sources and stand-ins are those of make_fairseq_fixtures.py, make_marian_fixtures.py and
check_ct2_converters.py (README.md, "Rerunning"). Run with Debian's /usr/bin/python3."""

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import interop_common as common  # noqa: E402

VARIANTS = ("transformer_postnorm_shared", "transformer_iwslt_prenorm_learned",
            "transformer_untied_noscale")
TINY = common.REPO / "tests" / "data" / "format2-tiny"
STORED = common.FIXTURES / "export" / "csan_tiny_fairseq"
TOLERANCE = 1e-4


def run(*args):
    done = subprocess.run([str(a) for a in args], capture_output=True, text=True)
    if done.returncode != 0:
        common.fail(f"{' '.join(str(a) for a in args)}: {done.stderr.strip()}")
    return done.stdout


def compare(name, ids, scores, want_ids, want_scores, lprobs=None, want_lprobs=None, rows=None):
    import numpy as np
    same = sum(a == b for a, b in zip(ids, want_ids))
    worst_score = max(abs(float(a) - float(b)) for a, b in zip(scores, want_scores))
    line = f"{name}: {same} of {len(want_ids)} translations identical, scores within {worst_score:.1e}"
    ok = same == len(want_ids) == len(ids) and worst_score < TOLERANCE
    if lprobs is not None:
        worst = float(np.abs(lprobs - want_lprobs)[rows].max())
        line += f", log-probs within {worst:.1e}"
        ok = ok and worst < TOLERANCE
    print(line)
    return ok


def fairseq_checks(bin_dir, work, results):
    import numpy as np
    import make_fairseq_fixtures as fx
    spm = common.FIXTURES / "spm"
    for variant in VARIANTS:
        fixture = common.FIXTURES / "fairseq" / variant
        model = work / f"{variant}.pt"
        out = work / f"{variant}-fairseq"
        run(bin_dir / "csan-import", "--fairseq", fixture / "checkpoint.pt", "--spm", spm / "en.model",
            "--target-spm", spm / "de.model", "--output", model)
        run(bin_dir / "csan-export", "--path", model, "--to", "fairseq", "--out", out)
        models, _, task = fx.load(out / "checkpoint.pt", out)
        ids, _, scores = fx.translate(models, task, spm)
        batch, lprobs = fx.teacher_forced(models, task, spm)
        want = np.load(fixture / "logits.npy")
        rows = np.array(batch["target"]) != batch["pad"]
        results[f"fairseq loads the export of {variant}"] = compare(
            f"fairseq {variant} (exported)", ids, scores, common.read_lines(fixture / "hyp.ids.txt"),
            common.read_lines(fixture / "hyp.scores.txt"), lprobs, want, rows)
        results[f"CTranslate2 converts the fairseq export of {variant}"] = ct2_fairseq(out)


def marian_checks(bin_dir, work, results):
    import numpy as np
    import make_marian_fixtures as mx
    fixture = common.FIXTURES / "marian"
    model = work / "marian.pt"
    out = work / "marian-hf"
    run(bin_dir / "csan-import", "--marian", fixture, "--output", model)
    run(bin_dir / "csan-export", "--path", model, "--to", "marian", "--out", out)
    hf, tok = mx.load(out)
    ids, _, scores = mx.translate(hf, tok)
    batch, lprobs = mx.teacher_forced(hf, tok)
    rows = np.array(batch["labels"]) != batch["pad"]
    results["transformers loads the MarianMT export"] = compare(
        "transformers marian (exported)", ids, scores, common.read_lines(fixture / "hyp.ids.txt"),
        common.read_lines(fixture / "hyp.scores.txt"), lprobs, np.load(fixture / "logits.npy"), rows)
    results["CTranslate2 converts the MarianMT export"] = ct2_marian(out)


def csan_generate_ids(bin_dir, checkpoint, lines_file, tgt_dict):
    """csan-generate's beam-5 hypotheses as fairseq ids (</s> last), fairseq-generate's settings."""
    out = run(bin_dir / "csan-generate", "--path", checkpoint, "--input", lines_file, "--beam", "5",
              "--max-len-a", "0.5", "--max-len-b", "5", "--batch-size", "1", "--allow-bos",
              "--output-format", "fairseq")
    return {int(line[2:line.index("\t")]): line.split("\t")[2].split() for line in out.splitlines()
            if line.startswith("H-")}


def csan_tiny_checks(bin_dir, work, results, write):
    import torch
    import sentencepiece as sp_module
    import make_fairseq_fixtures as fx
    out = work / "tiny-fairseq"
    run(bin_dir / "csan-export", "--path", TINY / "checkpoint.pt", "--to", "fairseq", "--out", out)
    models, _, task = fx.load(out / "checkpoint.pt", out)
    from fairseq.dataclass.configs import GenerationConfig
    from omegaconf import OmegaConf
    gen = OmegaConf.structured(GenerationConfig)
    for k, v in fx.GENERATION.items():
        gen[k] = v
    generator = task.build_generator(models, gen)
    sp = sp_module.SentencePieceProcessor(model_file=str(out / "spm.model"))
    lines = common.read_lines(common.MULTI30K / "test2016.en", common.TRANSLATE_LINES)
    tokens = [task.source_dictionary.encode_line(" ".join(sp.encode(line, out_type=str)),
                                                 add_if_not_exist=False, append_eos=True).long()
              for line in lines]
    dataset = task.build_dataset_for_inference(tokens, [len(t) for t in tokens])
    ids, scores = [], []
    for i in range(len(lines)):
        sample = dataset.collater([dataset[i]])
        with torch.no_grad():
            best = task.inference_step(generator, models, sample)[0][0]
        ids.append(" ".join(str(t) for t in best["tokens"].tolist()))
        scores.append(f"{best['score'].item():.6f}")
    lines_file = work / "test200.en"
    common.save_lines(lines_file, lines)
    pieces = csan_generate_ids(bin_dir, TINY / "checkpoint.pt", lines_file, None)
    d = task.target_dictionary
    csan_ids = [" ".join(str(d.index(p)) for p in pieces[i]) + f" {d.eos()}" for i in range(len(lines))]
    # csan-generate's text leaves <s> out, as fairseq-generate's does.
    printed = [" ".join(t for t in h.split() if t != str(d.bos())) for h in ids]
    same = sum(a == b for a, b in zip(csan_ids, printed))
    print(f"fairseq on csan's trained tiny Transformer (exported): {same} of {len(lines)} "
          f"translations identical to csan-generate's, {len(set(ids))} distinct")
    results["fairseq translates csan's trained Transformer as csan-generate does"] = same == len(lines)
    if write:
        STORED.mkdir(parents=True, exist_ok=True)
        common.save_lines(STORED / "hyp.ids.txt", ids)
        common.save_lines(STORED / "hyp.scores.txt", scores)
        common.write_manifest(STORED, {
            "library": "facebookresearch/fairseq", "commit": common.git_commit(FAIRSEQ_SRC),
            "model": "tests/data/format2-tiny/checkpoint.pt exported by csan-export --to fairseq",
            "generation": fx.GENERATION, "batch": "one sentence at a time",
            "translated": f"first {common.TRANSLATE_LINES} lines of multi30k test2016.en",
            "hyp.ids.txt": "SequenceGenerator's best hypothesis, target dictionary ids, </s> last",
            "stubbed_modules": STUBBED})
        print(f"wrote {STORED.relative_to(common.REPO)}")
    results["CTranslate2 converts the fairseq export of csan's trained Transformer"] = ct2_fairseq(out)


def ct2_fairseq(folder):
    from ctranslate2.converters.fairseq import FairseqConverter
    import torch
    state = torch.load(folder / "checkpoint.pt", map_location="cpu")
    task = state["cfg"]["task"]
    return ct2_run(lambda out: FairseqConverter(str(folder / "checkpoint.pt"), str(folder),
                                                source_lang=task["source_lang"],
                                                target_lang=task["target_lang"],
                                                unsafe_deserialization=True).convert(out, force=True))


def ct2_marian(folder):
    from ctranslate2.converters.transformers import TransformersConverter

    class Converter(TransformersConverter):
        # As check_ct2_converters.py: CTranslate2 4.8 passes dtype=, transformers 4.48 torch_dtype=.
        def load_model(self, model_class, model_name_or_path, **kwargs):
            kwargs["torch_dtype"] = kwargs.pop("dtype", None)
            return super().load_model(model_class, model_name_or_path, **kwargs)

    return ct2_run(lambda out: Converter(str(folder)).convert(out, force=True))


def ct2_run(convert):
    try:
        with tempfile.TemporaryDirectory(prefix="csan-ct2-export-") as out:
            convert(out)
        print("  CTranslate2 converter: ok")
        return True
    except Exception as e:  # noqa: BLE001  (a refusal is the result to report)
        print(f"  CTranslate2 converter: refused: {type(e).__name__}: {e}")
        return False


FAIRSEQ_SRC = None
STUBBED = []


def main():
    global FAIRSEQ_SRC, STUBBED
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin", required=True, type=Path, help="the folder of csan-import, csan-export")
    parser.add_argument("--fairseq-src", required=True, type=Path)
    parser.add_argument("--transformers-src", required=True, type=Path)
    parser.add_argument("--ct2-src", required=True, type=Path)
    parser.add_argument("--write", action="store_true", help=f"store fairseq's translations in {STORED}")
    opts = parser.parse_args()
    import check_ct2_converters
    import make_fairseq_fixtures
    import transformers_env
    FAIRSEQ_SRC = opts.fairseq_src.resolve()
    STUBBED = make_fairseq_fixtures.import_fairseq(FAIRSEQ_SRC)
    transformers_env.import_transformers(opts.transformers_src)
    check_ct2_converters.import_ct2(opts.ct2_src)
    common.single_threaded_torch()
    results = {}
    with tempfile.TemporaryDirectory(prefix="csan-check-exports-") as tmp:
        work = Path(tmp)
        fairseq_checks(opts.bin, work, results)
        marian_checks(opts.bin, work, results)
        csan_tiny_checks(opts.bin, work, results, opts.write)
    failed = [name for name, ok in results.items() if not ok]
    print(f"{len(results) - len(failed)} of {len(results)} checks pass "
          f"(fairseq {common.git_commit(opts.fairseq_src)}, transformers "
          f"{common.git_commit(opts.transformers_src)}, CTranslate2 {common.git_commit(opts.ct2_src)})")
    if failed:
        common.fail("failed: " + "; ".join(failed))


if __name__ == "__main__":
    main()
