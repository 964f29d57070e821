#!/usr/bin/python3
"""The interop fixtures (tests/data/interop/, made by tools/interop/) are consistent:

  * every folder holds exactly the files its MANIFEST.json lists, with those sha256 sums;
  * each fairseq checkpoint loads with torch as fairseq wrote it (args None, cfg a plain
    container whose "model" is an argparse Namespace naming the arch) and its recorded
    teacher-forced log-probs are reproduced within 1e-4 by the independent numpy forward in
    tools/interop/reference_forward.py, written from tools/interop/FORMATS.md;
  * so are the Marian folder's, from model.safetensors read with numpy alone, which must hold
    the same tensors as pytorch_model.bin;
  * the stored beam-search scores follow the documented rules: fairseq's score is the mean
    log-prob of the hypothesis tokens including </s>; transformers' is the same mean over the
    generated tokens, except that a </s> forced at the length limit counts 0;
  * dictionaries and vocabularies have the layouts FORMATS.md describes.

Needs Debian's python3-numpy and python3-torch; exits 77 (ctest: skipped) without them."""

import argparse  # noqa: F401  (the fairseq checkpoints pickle argparse.Namespace)
import hashlib
import json
import os
import sys
import unittest
from pathlib import Path

SOURCE = Path(os.environ.get("CSAN_SOURCE_DIR", Path(__file__).resolve().parents[2]))
FIXTURES = SOURCE / "tests" / "data" / "interop"
sys.path.insert(0, str(SOURCE / "tools" / "interop"))

try:
    import numpy as np
    import torch
except ImportError as e:  # pragma: no cover - depends on the machine
    print(f"skipped: {e} (install python3-numpy python3-torch)")
    sys.exit(77)

import reference_forward as rf  # noqa: E402

TOLERANCE = 1e-4
SCORED_HYPOTHESES = 25
FAIRSEQ_VARIANTS = ["transformer_postnorm_shared", "transformer_iwslt_prenorm_learned",
                    "transformer_untied_noscale"]
FAIRSEQ_PAD, FAIRSEQ_EOS, FAIRSEQ_UNK = 1, 2, 3


def lines(path):
    return Path(path).read_text(encoding="utf-8").splitlines()


def spm_pieces(lang, sentences):
    """SentencePiece pieces of the test sentences; None without python3-sentencepiece."""
    try:
        import sentencepiece as spm
    except ImportError:
        return None
    sp = spm.SentencePieceProcessor(model_file=str(FIXTURES / "spm" / f"{lang}.model"))
    return [sp.encode(s, out_type=str) for s in sentences]


def test_sentences():
    return lines(SOURCE.parent / "shared" / "data" / "multi30k" / "test2016.en")[:200]


class Manifests(unittest.TestCase):
    def test_every_folder_matches_its_manifest(self):
        for name in ("spm", "fairseq", "marian", "export/csan_tiny_fairseq"):
            folder = FIXTURES / name
            manifest = json.loads((folder / "MANIFEST.json").read_text())
            present = {str(p.relative_to(folder)) for p in folder.rglob("*")
                       if p.is_file() and p.name != "MANIFEST.json"}
            self.assertEqual(present, set(manifest["files"]), name)
            for rel, digest in manifest["files"].items():
                actual = hashlib.sha256((folder / rel).read_bytes()).hexdigest()
                self.assertEqual(actual, digest, f"{name}/{rel}")
            self.assertIn("provenance", manifest)


class Fairseq(unittest.TestCase):
    def load(self, variant):
        state = torch.load(FIXTURES / "fairseq" / variant / "checkpoint.pt", map_location="cpu")
        return state, {k: v.numpy() for k, v in state["model"].items()}, vars(state["cfg"]["model"])

    def test_checkpoints_have_fairseqs_layout(self):
        for variant in FAIRSEQ_VARIANTS:
            state, _, args = self.load(variant)
            self.assertIsNone(state["args"], variant)
            self.assertIsInstance(state["cfg"], dict)
            self.assertEqual(state["cfg"]["task"]["_name"], "translation")
            self.assertIn(args["_name"], ("transformer", "transformer_iwslt_de_en"))
            self.assertIn("lr_scheduler_state", state["optimizer_history"][-1])
            self.assertIn("extra_state", state)

    def test_dictionaries(self):
        for variant in FAIRSEQ_VARIANTS:
            for lang in ("en", "de"):
                entries = [line.split(" ") for line in lines(FIXTURES / "fairseq" / variant /
                                                             f"dict.{lang}.txt")]
                self.assertTrue(all(len(e) == 2 and e[1].isdigit() for e in entries))
                # padding_factor 8: the 4 specials plus the entries fill a multiple of 8.
                self.assertEqual((4 + len(entries)) % 8, 0, f"{variant} dict.{lang}.txt")

    def test_reference_forward_reproduces_logits(self):
        for variant in FAIRSEQ_VARIANTS:
            _, weights, args = self.load(variant)
            folder = FIXTURES / "fairseq" / variant
            batch = json.loads((folder / "batch.json").read_text())
            logits = np.load(folder / "logits.npy")
            vocab = len(lines(folder / "dict.de.txt")) + 4
            self.assertEqual(logits.shape[2], vocab)
            for row, target in enumerate(batch["target"]):
                src = [t for t in batch["src_tokens_left_padded"][row] if t != FAIRSEQ_PAD]
                n = sum(1 for t in target if t != FAIRSEQ_PAD)
                prev = batch["prev_output_tokens"][row][:n]
                self.assertEqual(prev[0], FAIRSEQ_EOS)
                ours = rf.fairseq_forward(weights, args, src, prev)
                diff = np.abs(ours - logits[row, :n]).max()
                self.assertLess(diff, TOLERANCE, f"{variant} row {row}")

    def test_hypothesis_scores_follow_fairseqs_rule(self):
        pieces = spm_pieces("en", test_sentences()[:SCORED_HYPOTHESES])
        if pieces is None:
            self.skipTest("python3-sentencepiece is not installed")
        for variant in FAIRSEQ_VARIANTS:
            _, weights, args = self.load(variant)
            folder = FIXTURES / "fairseq" / variant
            src_dict = {line.split(" ")[0]: i + 4 for i, line in
                        enumerate(lines(folder / "dict.en.txt"))}
            hyps, scores = lines(folder / "hyp.ids.txt"), lines(folder / "hyp.scores.txt")
            self.assertEqual(len(hyps), 200)
            self.assertEqual(len(lines(folder / "hyp.txt")), 200)
            for i, sentence in enumerate(pieces):
                src = [src_dict.get(p, FAIRSEQ_UNK) for p in sentence] + [FAIRSEQ_EOS]
                hyp = [int(t) for t in hyps[i].split()]
                self.assertEqual(hyp[-1], FAIRSEQ_EOS)
                # fairseq's length cap: max_len_a * source length + max_len_b tokens + </s>.
                self.assertLessEqual(len(hyp), int(0.5 * len(src) + 5) + 1)
                lprobs = rf.fairseq_forward(weights, args, src, [FAIRSEQ_EOS] + hyp[:-1])
                mean = lprobs[np.arange(len(hyp)), hyp].mean()
                self.assertAlmostEqual(mean, float(scores[i]), delta=TOLERANCE,
                                       msg=f"{variant} sentence {i}")


class Marian(unittest.TestCase):
    folder = FIXTURES / "marian"

    def config(self):
        return json.loads((self.folder / "config.json").read_text())

    def weights(self):
        weights, metadata = rf.read_safetensors(self.folder / "model.safetensors")
        self.assertEqual(metadata, {"format": "pt"})
        return weights

    def test_safetensors_and_bin_hold_the_same_tensors(self):
        weights = self.weights()
        binary = torch.load(self.folder / "pytorch_model.bin", map_location="cpu")
        for name, tensor in weights.items():
            self.assertTrue(np.array_equal(tensor, binary[name].numpy()), name)
        # The .bin keeps every tied name; the safetensors file keeps one of each.
        shared = binary["model.shared.weight"].numpy()
        for alias in ("model.encoder.embed_tokens.weight", "model.decoder.embed_tokens.weight",
                      "lm_head.weight"):
            self.assertTrue(np.array_equal(binary[alias].numpy(), shared), alias)
        self.assertFalse(any("embed_positions" in k for k in binary))
        self.assertTrue(np.abs(weights["final_logits_bias"]).max() > 0)

    def test_vocabulary_layout(self):
        vocab = json.loads((self.folder / "vocab.json").read_text())
        config = self.config()
        self.assertEqual(sorted(vocab.values()), list(range(len(vocab))))
        self.assertEqual(len(vocab), config["vocab_size"])
        self.assertEqual(vocab["</s>"], 0)
        self.assertEqual(vocab["</s>"], config["eos_token_id"])
        self.assertEqual(vocab["<unk>"], 1)
        self.assertEqual(vocab["<pad>"], len(vocab) - 1)
        self.assertEqual(config["pad_token_id"], vocab["<pad>"])
        self.assertEqual(config["decoder_start_token_id"], vocab["<pad>"])
        tokenizer = json.loads((self.folder / "tokenizer_config.json").read_text())
        self.assertEqual(tokenizer["tokenizer_class"], "MarianTokenizer")
        self.assertFalse(tokenizer["separate_vocabs"])

    def test_reference_forward_reproduces_logits(self):
        weights, config = self.weights(), self.config()
        batch = json.loads((self.folder / "batch.json").read_text())
        logits = np.load(self.folder / "logits.npy")
        for row, labels in enumerate(batch["labels"]):
            src = [t for t, m in zip(batch["input_ids"][row], batch["attention_mask"][row]) if m]
            n = sum(1 for t in labels if t not in (-100, config["pad_token_id"]))
            dec = batch["decoder_input_ids"][row][:n]
            self.assertEqual(dec[0], config["decoder_start_token_id"])
            ours = rf.marian_forward(weights, config, src, dec)
            self.assertLess(np.abs(ours - logits[row, :n]).max(), TOLERANCE, f"row {row}")

    def test_hypothesis_scores_follow_transformers_rule(self):
        pieces = spm_pieces("en", test_sentences()[:SCORED_HYPOTHESES])
        if pieces is None:
            self.skipTest("python3-sentencepiece is not installed")
        weights, config = self.weights(), self.config()
        vocab = json.loads((self.folder / "vocab.json").read_text())
        hyps, scores = lines(self.folder / "hyp.ids.txt"), lines(self.folder / "hyp.scores.txt")
        self.assertEqual(len(hyps), 200)
        eos, start = config["eos_token_id"], config["decoder_start_token_id"]
        for i, sentence in enumerate(pieces):
            src = [vocab.get(p, vocab["<unk>"]) for p in sentence] + [eos]
            hyp = [int(t) for t in hyps[i].split()]
            self.assertEqual(hyp[0], start)
            self.assertEqual(hyp[-1], eos)
            generated = hyp[1:]
            limit = int(0.5 * len(src) + 5)
            self.assertLessEqual(len(generated), limit)
            lprobs = rf.marian_forward(weights, config, src, hyp[:-1])
            picked = lprobs[np.arange(len(generated)), generated]
            if len(generated) == limit:
                picked[-1] = 0.0  # ForcedEOSTokenLogitsProcessor sets the forced </s> to 0
            self.assertAlmostEqual(picked.mean(), float(scores[i]), delta=TOLERANCE,
                                   msg=f"sentence {i}")


if __name__ == "__main__":
    unittest.main(verbosity=2)
