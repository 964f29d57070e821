"""What the fixture scripts share: the repository's paths, the SentencePiece models they all use,
the Multi30k sentences they translate, writing arrays and texts, and the bit-for-bit rerun check.

Everything here is deterministic: SentencePiece trains single-threaded on the whole corpus, and
every random tensor comes from a torch.Generator seeded by the caller."""

import filecmp
import hashlib
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "data" / "interop"
SHARED = REPO.parent / "shared"
MULTI30K = SHARED / "data" / "multi30k"

# The translation fixtures use the first 200 sentences of test2016 (English side); the logits
# fixtures a fixed teacher-forced batch of two short validation pairs (index into val.*).
TRANSLATE_LINES = 200
LOGITS_PAIRS = (6, 35)
BEAM = 5
SPM_VOCAB = 200


def single_threaded_torch():
    """One intra-op thread: float sums then run in one order, so a rerun on the same machine
    reproduces every logit and every beam decision bit for bit."""
    import torch
    torch.set_num_threads(1)


def fail(message):
    print(f"{Path(sys.argv[0]).name}: error: {message}", file=sys.stderr)
    sys.exit(1)


def read_lines(path, limit=None):
    path = Path(path)
    if not path.is_file():
        fail(f"{path}: no such file (the Multi30k corpus is expected in ../shared/data/multi30k)")
    with open(path, encoding="utf-8") as f:
        lines = [line.rstrip("\n") for line in f]
    return lines[:limit] if limit else lines


def train_spm(corpus, out_dir, name, vocab_size=SPM_VOCAB):
    """A small unigram model, trained the same way every time: one thread, every sentence, no
    normalisation table (identity keeps the .model file a few KB instead of ~240 KB). The model
    file records its trainer's input and output paths, so training runs in a scratch folder on
    relative names: the bytes do not depend on where the repository is checked out."""
    import sentencepiece as spm
    out_dir = Path(out_dir).resolve()
    with tempfile.TemporaryDirectory(prefix="csan-spm-") as work:
        os.symlink(Path(corpus).resolve(), Path(work) / Path(corpus).name)
        cwd = os.getcwd()
        os.chdir(work)
        try:
            spm.SentencePieceTrainer.train(
                input=Path(corpus).name, model_prefix=name, vocab_size=vocab_size,
                model_type="unigram", character_coverage=1.0, normalization_rule_name="identity",
                num_threads=1, input_sentence_size=0, shuffle_input_sentence=False, minloglevel=2)
        finally:
            os.chdir(cwd)
        shutil.move(Path(work) / f"{name}.model", out_dir / f"{name}.model")
    return out_dir / f"{name}.model"


def spm_encode_file(model, src, dst):
    import sentencepiece as spm
    sp = spm.SentencePieceProcessor(model_file=str(model))
    with open(dst, "w", encoding="utf-8") as out:
        for line in read_lines(src):
            out.write(" ".join(sp.encode(line, out_type=str)) + "\n")


def save_json(path, obj):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=1, ensure_ascii=False, sort_keys=True)
        f.write("\n")


def save_lines(path, lines):
    with open(path, "w", encoding="utf-8") as f:
        for line in lines:
            f.write(line + "\n")


def save_npy(path, array):
    import numpy as np
    np.save(path, np.ascontiguousarray(array))


def sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def corpus_provenance():
    """What every MANIFEST.json says about the sentences used."""
    return {"translated": f"first {TRANSLATE_LINES} lines of multi30k test2016.en",
            "logits_batch": f"multi30k val lines {list(LOGITS_PAIRS)} (0-based)"}


def write_manifest(folder, provenance):
    """MANIFEST.json: provenance (library commits, versions, stubs) and the sha256 of every file,
    so a rerun can be compared and the tests know what belongs to the fixture."""
    folder = Path(folder)
    files = {str(p.relative_to(folder)): sha256(p) for p in sorted(folder.rglob("*"))
             if p.is_file() and p.name != "MANIFEST.json"}
    save_json(folder / "MANIFEST.json", {"provenance": provenance, "files": files})


def parse_fixture_args(doc, source_option, source_help):
    """The options every fixture builder takes: the library's source folder and --check."""
    import argparse
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument(source_option, required=True, type=Path, help=source_help)
    parser.add_argument("--check", action="store_true",
                        help="rebuild in a scratch folder and compare with the stored fixtures")
    return parser.parse_args()


def build_then_compare(build, target, check):
    """build(folder) writes the fixture into a fresh folder. Without --check that folder replaces
    target; with --check it is compared file by file with target, and any difference is an error."""
    scratch = Path(tempfile.mkdtemp(prefix="csan-interop-"))
    try:
        out = scratch / target.name
        out.mkdir()
        build(out)
        if not check:
            if target.exists():
                shutil.rmtree(target)
            shutil.copytree(out, target)
            print(f"wrote {target.relative_to(REPO)} ({folder_size(target) // 1024} KiB)")
            return
        differ = compare_folders(out, target)
        if differ:
            fail(f"rerun differs from {target.relative_to(REPO)}: {', '.join(differ)}")
        print(f"rerun reproduces {target.relative_to(REPO)} bit for bit")
    finally:
        shutil.rmtree(scratch)


def compare_folders(a, b):
    a, b = Path(a), Path(b)
    names_a = {str(p.relative_to(a)) for p in a.rglob("*") if p.is_file()}
    names_b = {str(p.relative_to(b)) for p in b.rglob("*") if p.is_file()} if b.exists() else set()
    differ = sorted(names_a ^ names_b)
    differ += sorted(n for n in names_a & names_b if not filecmp.cmp(a / n, b / n, shallow=False))
    return differ


def folder_size(folder):
    return sum(p.stat().st_size for p in Path(folder).rglob("*") if p.is_file())


def git_commit(src):
    """The commit a source folder was exported from: a COMMIT file beside it (git archive keeps
    none) or its own git metadata."""
    src = Path(src)
    marker = src / "COMMIT"
    if marker.is_file():
        return marker.read_text().strip()
    head = src / ".git" / "HEAD"
    if head.is_file():
        import subprocess
        return subprocess.run(["git", "-C", str(src), "rev-parse", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
    return "unknown (no COMMIT file or .git in the source folder)"
