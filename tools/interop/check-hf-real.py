#!/usr/bin/env python3
"""Reruns the Marian part of the interop fixtures with the REAL libraries (transformers,
safetensors, sentencepiece, torch 2.x, as installed on the GPU machine; CPU is enough) and
compares with what tools/interop/make_marian_fixtures.py stored from transformers' source with
stand-ins (tests/data/interop/marian/):

  1. the real safetensors opens model.safetensors (written from the format by the stand-in) and
     holds the same tensors as pytorch_model.bin;
  2. the real MarianTokenizer and MarianMTModel.from_pretrained load the folder; the tokenizer
     gives the stored input ids; the teacher-forced log-probs match logits.npy within 1e-4;
  3. generate() with the stored settings gives the stored token ids on all 200 sentences and
     the stored scores within 1e-4;
  4. save_pretrained of the real library round-trips (what it writes loads to equal weights).

  python3 tools/interop/check-hf-real.py [--out DIR]

Writes DIR/hf-real/ (default $OUT or ./hf-real-out): versions.json, hyp.ids.txt, hyp.txt,
hyp.scores.txt, logits.npy, model.safetensors as the real library writes it, and report.txt.
Exit status 0 when every check passes, 1 otherwise (the report names each difference)."""

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "tests" / "data" / "interop" / "marian"
MULTI30K = REPO.parent / "shared" / "data" / "multi30k"
TOLERANCE = 1e-4


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", "hf-real-out")))
    parser.add_argument("--multi30k", type=Path, default=MULTI30K)
    opts = parser.parse_args()
    out = opts.out / "hf-real"
    out.mkdir(parents=True, exist_ok=True)

    import numpy as np
    import safetensors
    import sentencepiece
    import torch
    import transformers
    from safetensors import safe_open
    from transformers import MarianMTModel, MarianTokenizer

    torch.set_num_threads(1)
    manifest = json.loads((FIXTURE / "MANIFEST.json").read_text())["provenance"]
    problems, report = [], []

    def check(ok, what):
        report.append(("ok   " if ok else "FAIL ") + what)
        if not ok:
            problems.append(what)

    versions = {"transformers": transformers.__version__, "safetensors": safetensors.__version__,
                "sentencepiece": sentencepiece.__version__, "torch": torch.__version__,
                "python": sys.version.split()[0],
                "fixture_made_with": {k: manifest[k] for k in ("commit", "transformers_version",
                                                               "torch")}}
    (out / "versions.json").write_text(json.dumps(versions, indent=1) + "\n")

    # 1. safetensors
    binary = torch.load(FIXTURE / "pytorch_model.bin", map_location="cpu")
    with safe_open(str(FIXTURE / "model.safetensors"), framework="pt") as f:
        check(f.metadata() == {"format": "pt"}, "model.safetensors metadata is {'format': 'pt'}")
        same = all(torch.equal(f.get_tensor(k), binary[k]) for k in f.keys())
        check(same, f"real safetensors reads {len(list(f.keys()))} tensors equal to pytorch_model.bin")

    # 2. tokenizer, model, logits
    tok = MarianTokenizer.from_pretrained(str(FIXTURE))
    model = MarianMTModel.from_pretrained(str(FIXTURE), attn_implementation="eager")
    model.eval()
    batch = json.loads((FIXTURE / "batch.json").read_text())
    enc = tok(batch["source_lines"], text_target=batch["target_lines"], return_tensors="pt",
              padding=True)
    check(enc["input_ids"].tolist() == batch["input_ids"], "tokenizer gives the stored input ids")
    check(enc["labels"].tolist() == batch["labels"], "tokenizer gives the stored labels")
    with torch.no_grad():
        logits = model(input_ids=torch.tensor(batch["input_ids"]),
                       attention_mask=torch.tensor(batch["attention_mask"]),
                       decoder_input_ids=torch.tensor(batch["decoder_input_ids"])).logits
    lprobs = torch.log_softmax(logits, -1).numpy()
    np.save(out / "logits.npy", lprobs)
    stored = np.load(FIXTURE / "logits.npy")
    pad = batch["pad"]
    worst = 0.0
    for row, labels in enumerate(batch["labels"]):
        n = sum(1 for t in labels if t not in (-100, pad))
        worst = max(worst, float(np.abs(lprobs[row, :n] - stored[row, :n]).max()))
    check(worst < TOLERANCE, f"teacher-forced log-probs within {TOLERANCE} (max diff {worst:.2e})")

    # 3. generate
    gen = manifest["generation"]
    lines = (opts.multi30k / "test2016.en").read_text(encoding="utf-8").splitlines()[:200]
    ids, texts, scores = [], [], []
    for line in lines:
        e = tok([line], return_tensors="pt")
        src_len = e["input_ids"].shape[1]
        with torch.no_grad():
            g = model.generate(**e, num_beams=gen["num_beams"], length_penalty=gen["length_penalty"],
                               early_stopping=gen["early_stopping"], do_sample=False,
                               no_repeat_ngram_size=0, num_return_sequences=1,
                               max_new_tokens=int(0.5 * src_len + 5), output_scores=True,
                               return_dict_in_generate=True)
        seq = g.sequences[0]
        ids.append(" ".join(str(t) for t in seq.tolist()))
        texts.append(tok.decode(seq, skip_special_tokens=True))
        scores.append(float(g.sequences_scores[0]) if g.sequences_scores is not None else float("nan"))
    (out / "hyp.ids.txt").write_text("\n".join(ids) + "\n")
    (out / "hyp.txt").write_text("\n".join(texts) + "\n", encoding="utf-8")
    (out / "hyp.scores.txt").write_text("\n".join(f"{s:.6f}" for s in scores) + "\n")
    want_ids = (FIXTURE / "hyp.ids.txt").read_text().splitlines()
    want_scores = [float(s) for s in (FIXTURE / "hyp.scores.txt").read_text().splitlines()]
    want_texts = (FIXTURE / "hyp.txt").read_text(encoding="utf-8").splitlines()
    differ = [i for i, (a, b) in enumerate(zip(ids, want_ids)) if a != b]
    check(not differ, f"beam-5 token ids identical on 200 sentences (differ: {differ[:10]})")
    check(texts == want_texts, "detokenized translations identical")
    bad = [i for i, (a, b) in enumerate(zip(scores, want_scores)) if not abs(a - b) < TOLERANCE]
    check(not bad, f"scores within {TOLERANCE} (differ: {bad[:10]})")

    # 4. the real save_pretrained
    with tempfile.TemporaryDirectory() as tmp:
        model.save_pretrained(tmp, safe_serialization=True)
        again = MarianMTModel.from_pretrained(tmp).state_dict()
        ref = model.state_dict()
        check(all(torch.equal(again[k], ref[k]) for k in ref),
              "real save_pretrained + from_pretrained round-trips")
        real_file = Path(tmp) / "model.safetensors"
        if real_file.is_file():
            (out / "model.safetensors").write_bytes(real_file.read_bytes())
            with safe_open(str(real_file), framework="pt") as f:
                keys = set(f.keys())
                tied = sorted(k for k in keys if k.endswith(("shared.weight", "embed_tokens.weight"))
                              or k == "lm_head.weight")
                report.append(f"info real save_pretrained wrote {len(keys)} tensors; of the tied "
                              f"embeddings: {tied}; metadata {f.metadata()}")

    (out / "report.txt").write_text("\n".join(report) + "\n")
    print("\n".join(report))
    print(f"{len(report) - len(problems) - sum(r.startswith('info') for r in report)} passed, "
          f"{len(problems)} failed")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
