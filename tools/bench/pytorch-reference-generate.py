#!/usr/bin/python3
"""The issue's yardstick for csan-generate's speed: a plain PyTorch eager beam search
(fairseq's SequenceGenerator, written the way a PyTorch user would) over the SAME
checkpoint and binarized data as bench-generate, so the two figures can be taken side by
side in one sitting and the hypotheses compared.

    bench-generate --path CKPT --dump-weights /tmp/weights.bin
    OMP_NUM_THREADS=2 /usr/bin/python3 tools/bench/pytorch-reference-generate.py \\
        --weights /tmp/weights.bin --data DIR [--gen-subset test --beam 5 --batch-size 64] \\
        [--output ids.txt] [--compare csan-generate-fairseq-output.txt]

Needs Debian's python3-torch (the same LibTorch 1.13 and OpenBLAS as csan), hence
/usr/bin/python3; a bench helper, not part of the build or the tests. The model is
csan's post-norm Transformer (toolkit/models/transformer*.cpp): embeddings scaled by
sqrt(d) plus fairseq's sinusoidal positions (from pad + 1), ReLU FFN, packed Q|K|V
projection, output tied to the embedding. The search follows csan's SequenceGenerator
(fairseq's rules): 2 * beam candidates per sentence from cumulative + log_softmax, an </s>
among the first `beam` candidates finishes a hypothesis (score / length^lenpen, </s>
counted), the first `beam` finished ones per sentence are kept, finished sentences leave
the batch; decoder self-attention keys/values cached per layer and concatenated each
step, encoder keys/values projected once per batch, beams reordered by index_select.

Prints `pytorch eager: N sentences, T target tokens, S s, X sentences/s, Y target
tokens/s`: tokens of the best hypotheses with their </s>, time of the translation loop
(batch assembly included, model loading excluded). --output writes the best hypothesis'
token ids per sentence in input order; --compare reads csan-generate --output-format
fairseq output (H- lines) and counts the sentences whose best hypothesis differs.
"""
import argparse
import math
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

from indexed_dataset import read_indexed

BOS = 0  # fairseq's <s>; never generated


def read_dictionary(path):
    """fairseq dict.txt: <s> <pad> </s> <unk>, then one `symbol count` per line."""
    symbols = ["<s>", "<pad>", "</s>", "<unk>"]
    with open(path, encoding="utf-8") as f:
        for line in f:
            symbols.append(line.rstrip("\n").rsplit(" ", 1)[0])
    return symbols


def read_weights(path):
    """bench-generate --dump-weights: options and float32 parameters by name."""
    with open(path, "rb") as f:
        blob = f.read()
    end = blob.find(b"\n\n")
    if not blob.startswith(b"csan-weights 1\n") or end < 0:
        sys.exit(path + ": not a bench-generate --dump-weights file")
    options, shapes = {}, []
    for line in blob[:end].decode("utf-8").split("\n")[1:]:
        fields = line.split(" ")
        if fields[0] == "option":
            options[fields[1]] = fields[2]
        else:
            if fields[1] != "float32":
                sys.exit(path + ": parameter " + fields[0] + " is " + fields[1] + ", expected float32")
            shapes.append((fields[0], [int(n) for n in fields[2:]]))
    params, offset = {}, end + 2
    for name, shape in shapes:
        count = int(np.prod(shape)) if shape else 1
        data = np.frombuffer(blob, dtype="<f4", count=count, offset=offset)
        params[name] = torch.from_numpy(data.copy()).view(shape)
        offset += 4 * count
    if offset != len(blob):
        sys.exit(path + ": %d bytes of data, the header describes %d" % (len(blob) - end - 2, offset - end - 2))
    return options, params


def sinusoidal(rows, dim, pad):
    half = dim // 2
    scale = math.log(10000) / (half - 1)
    freqs = torch.exp(torch.arange(half, dtype=torch.float) * -scale)
    angles = torch.arange(rows, dtype=torch.float).unsqueeze(1) * freqs.unsqueeze(0)
    table = torch.cat([torch.sin(angles), torch.cos(angles)], dim=1)
    if dim % 2:
        table = torch.cat([table, torch.zeros(rows, 1)], dim=1)
    table[pad] = 0
    return table


class Transformer:
    """csan's post-norm Transformer for inference, on plain tensors."""

    def __init__(self, options, params, precision="fp32"):
        def flag(key):
            return options.get(key, "0") == "1"

        unsupported = [k for k in ("normalize_before", "learned_pos", "no_scale_embedding",
                                   "layernorm_embedding") if flag(k)]
        if options.get("activation", "relu") != "relu":
            unsupported.append("activation " + options["activation"])
        if unsupported:
            sys.exit("pytorch-reference-generate: unsupported model options: " + ", ".join(unsupported))
        self.p = params
        self.heads = int(options["heads"])
        self.pad, self.eos = int(options["pad"]), int(options["eos"])
        self.enc_layers = int(options["encoder_layers"])
        self.dec_layers = int(options["decoder_layers"])
        self.src_embed = params["encoder.embed_tokens.weight"]
        self.tgt_embed = params.get("decoder.embed_tokens.weight", self.src_embed)
        self.out_proj = params.get("decoder.output_projection", self.tgt_embed)
        self.dim = self.src_embed.size(1)
        self.scale = math.sqrt(self.dim)
        rows = max(int(options["max_source_positions"]), int(options["max_target_positions"])) + self.pad + 1
        self.positions = sinusoidal(rows, self.dim, self.pad)
        self.precision = precision
        self.converted = {}  # (data pointer, shape) of a weight view -> its bf16 copy or int8 packing

    def lin(self, x, w, b=None):
        """x W^T + b in the model's precision, the way csan-generate --precision runs it:
        bf16 weights converted once, fp32 activations in and out; int8 per-channel
        weights packed once, activations quantized per call (quantized::linear_dynamic)."""
        if self.precision == "fp32":
            return F.linear(x, w, b)
        key = (w.data_ptr(), tuple(w.shape))
        if key not in self.converted:
            if self.precision == "bf16":
                self.converted[key] = (w.bfloat16(), None if b is None else b.bfloat16())
            else:
                scales = (w.abs().amax(1) / 127.0).clamp_min(1e-12).double()
                q = torch.quantize_per_channel(w, scales, torch.zeros(w.size(0), dtype=torch.long), 0, torch.qint8)
                self.converted[key] = torch.ops.quantized.linear_prepack(q, b)
        if self.precision == "bf16":
            wb, bb = self.converted[key]
            return F.linear(x.bfloat16(), wb, bb).float()
        shape = x.shape
        y = torch.ops.quantized.linear_dynamic(x.reshape(-1, shape[-1]).contiguous(), self.converted[key], False)
        return y.view(*shape[:-1], w.size(0))

    def split_heads(self, x):  # [B, T, D] -> [B, H, T, d]
        b, t, _ = x.shape
        return x.view(b, t, self.heads, -1).transpose(1, 2)

    def attend(self, q, k, v, mask=None):  # q [B, H, Tq, d] already scaled
        scores = torch.matmul(q, k.transpose(-2, -1))
        if mask is not None:
            scores = scores.masked_fill(mask[:, None, None, :], float("-inf"))
        out = torch.matmul(torch.softmax(scores, dim=-1), v)
        b, _, t, _ = out.shape
        return out.transpose(1, 2).reshape(b, t, self.dim)

    def norm(self, x, name):
        return F.layer_norm(x, (self.dim,), self.p[name + ".weight"], self.p[name + ".bias"], 1e-5)

    def linear(self, x, name):
        return self.lin(x, self.p[name + ".weight"], self.p[name + ".bias"])

    def ffn(self, x, name):
        return self.linear(F.relu(self.linear(x, name + ".fc1")), name + ".fc2")

    def encode(self, src):
        """src [B, S] right-padded -> output [B, S, D] and padding mask (None without padding)."""
        mask = src.eq(self.pad)
        real = (~mask).long()
        positions = torch.cumsum(real, dim=1) * real + self.pad
        x = F.embedding(src, self.src_embed) * self.scale + self.positions[positions]
        pad_mask = mask if bool(mask.any()) else None
        for i in range(self.enc_layers):
            name = "encoder.layers.%d." % i
            w, b = self.p[name + "self_attn.in_proj_weight"], self.p[name + "self_attn.in_proj_bias"]
            q, k, v = self.lin(x, w, b).chunk(3, dim=-1)
            q = self.split_heads(q) * (self.dim // self.heads) ** -0.5
            y = self.linear(self.attend(q, self.split_heads(k), self.split_heads(v), pad_mask), name + "self_attn.out_proj")
            x = self.norm(x + y, name + "self_attn_layer_norm")
            x = self.norm(x + self.ffn(x, name + "ffn"), name + "final_layer_norm")
        return x, pad_mask

    def encoder_kv(self, enc):
        """Encoder-side keys/values of every decoder layer, projected once."""
        d = self.dim
        kv = []
        for i in range(self.dec_layers):
            name = "decoder.layers.%d.encoder_attn." % i
            w, b = self.p[name + "in_proj_weight"], self.p[name + "in_proj_bias"]
            k, v = self.lin(enc, w[d:], b[d:]).chunk(2, dim=-1)
            kv.append((self.split_heads(k), self.split_heads(v)))
        return kv

    def decode_step(self, tokens, step, cache, enc_kv, enc_mask):
        """tokens [R] at position `step`; cache: per layer [k, v] of earlier steps (grown here)."""
        d = self.dim
        x = F.embedding(tokens, self.tgt_embed) * self.scale + self.positions[step + self.pad + 1]
        x = x.unsqueeze(1)  # [R, 1, D]
        scaling = (d // self.heads) ** -0.5
        for i in range(self.dec_layers):
            name = "decoder.layers.%d." % i
            w, b = self.p[name + "self_attn.in_proj_weight"], self.p[name + "self_attn.in_proj_bias"]
            q, k, v = self.lin(x, w, b).chunk(3, dim=-1)
            k, v = self.split_heads(k), self.split_heads(v)
            if cache[i] is not None:
                k = torch.cat([cache[i][0], k], dim=2)
                v = torch.cat([cache[i][1], v], dim=2)
            cache[i] = [k, v]
            y = self.attend(self.split_heads(q) * scaling, k, v)
            x = self.norm(x + self.linear(y, name + "self_attn.out_proj"), name + "self_attn_layer_norm")

            w, b = self.p[name + "encoder_attn.in_proj_weight"], self.p[name + "encoder_attn.in_proj_bias"]
            q = self.split_heads(self.lin(x, w[:d], b[:d])) * scaling
            y = self.attend(q, enc_kv[i][0], enc_kv[i][1], enc_mask)
            x = self.norm(x + self.linear(y, name + "encoder_attn.out_proj"), name + "encoder_attn_layer_norm")
            x = self.norm(x + self.ffn(x, name + "ffn"), name + "final_layer_norm")
        return self.lin(x.squeeze(1), self.out_proj)  # [R, V]


def beam_search(model, src_tokens, src_lengths, beam, max_len_a, max_len_b, min_len, lenpen, max_target_positions):
    """Best hypothesis per sentence: (token ids with </s>, normalized score)."""
    bsz = src_tokens.size(0)
    eos, pad = model.eos, model.pad
    max_len = torch.clamp((max_len_a * src_lengths.double()).long() + max_len_b, max=max_target_positions - 1)

    enc, enc_mask = model.encode(src_tokens)
    expand = torch.arange(bsz).repeat_interleave(beam)  # row i*beam + b: beam b of sentence i
    enc_kv = [(k.index_select(0, expand), v.index_select(0, expand)) for k, v in model.encoder_kv(enc)]
    enc_mask = enc_mask.index_select(0, expand) if enc_mask is not None else None
    cache = [None] * model.dec_layers

    finalized = [[] for _ in range(bsz)]
    sentences = torch.arange(bsz)  # original index of each sentence still searched
    tokens = torch.full((bsz * beam, 1), eos, dtype=torch.long)
    cumulative = torch.zeros(bsz, beam)
    step = 0
    while True:
        n = sentences.numel()
        lprobs = F.log_softmax(model.decode_step(tokens[:, -1], step, cache, enc_kv, enc_mask), dim=-1)
        lprobs[:, pad] = float("-inf")
        lprobs[:, BOS] = float("-inf")
        row_max_len = max_len.index_select(0, sentences).repeat_interleave(beam)
        if step < min_len:
            lprobs[:, eos] = torch.where(row_max_len > step, float("-inf"), lprobs[:, eos])
        at_end = row_max_len <= step
        if bool(at_end.any()):
            eos_lprobs = lprobs[:, eos].clone()
            lprobs[at_end] = float("-inf")
            lprobs[:, eos] = eos_lprobs
        vocab = lprobs.size(1)

        # 2 * beam candidates per sentence; on the first step all beams are the same prefix.
        if step == 0:
            total = lprobs.view(n, beam, vocab)[:, 0, :]
        else:
            total = (lprobs.view(n, beam, vocab) + cumulative.unsqueeze(2)).view(n, beam * vocab)
        cand_scores, cand_index = total.topk(2 * beam, dim=1)
        cand_tokens = cand_index % vocab
        cand_rows = cand_index.div(vocab, rounding_mode="floor") + torch.arange(n).unsqueeze(1) * beam
        finite = torch.isfinite(cand_scores)
        is_eos = cand_tokens.eq(eos) & finite

        # An </s> among the first `beam` candidates finishes a hypothesis.
        done_count = torch.zeros(n, dtype=torch.long)
        for i, c in is_eos[:, :beam].nonzero().tolist():
            s = int(sentences[i])
            if len(finalized[s]) >= beam:
                continue
            row = int(cand_rows[i, c])
            hyp = tokens[row, 1:].tolist() + [eos]
            finalized[s].append((float(cand_scores[i, c]) / (step + 1) ** lenpen, hyp))
        for i in range(n):
            done_count[i] = len(finalized[int(sentences[i])])

        # The first `beam` live (finite, not </s>) candidates continue the search.
        blocked = (is_eos | ~finite).long()
        order_key = blocked * (2 * beam) + torch.arange(2 * beam).unsqueeze(0)
        _, picked = order_key.topk(beam, dim=1, largest=False)
        live = blocked.gather(1, picked).eq(0)
        selected = live.sum(dim=1)
        over = done_count.ge(beam) | max_len.index_select(0, sentences).le(step) | selected.eq(0)
        keep = (~over).nonzero().squeeze(1)
        if keep.numel() == 0:
            break

        new_rows = cand_rows.gather(1, picked)
        new_tokens = torch.where(live, cand_tokens.gather(1, picked), torch.full_like(picked, eos))
        new_scores = torch.where(live, cand_scores.gather(1, picked), torch.full((n, beam), float("-inf")))
        new_rows, new_tokens, new_scores = new_rows[keep], new_tokens[keep], new_scores[keep]
        order = new_rows.view(-1)
        tokens = torch.cat([tokens.index_select(0, order), new_tokens.view(-1, 1)], dim=1)
        cache = [[k.index_select(0, order), v.index_select(0, order)] for k, v in cache]
        if keep.numel() < n:  # sentences left the batch: drop their encoder rows too
            enc_kv = [(k.index_select(0, order), v.index_select(0, order)) for k, v in enc_kv]
            enc_mask = enc_mask.index_select(0, order) if enc_mask is not None else None
        cumulative = new_scores
        sentences = sentences.index_select(0, keep)
        step += 1

    best = []
    for hyps in finalized:
        hyps.sort(key=lambda h: h[0], reverse=True)  # stable: earlier finished first on ties
        best.append(hyps[0] if hyps else (0.0, []))
    return best


def read_csan_hypotheses(path, symbols):
    """csan-generate --output-format fairseq: id -> (score in base 2, token ids without </s>)."""
    index = {s: i for i, s in enumerate(symbols)}
    hyps = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.startswith("H-"):
                continue
            fields = line.rstrip("\n").split("\t")
            sentence = int(fields[0][2:])
            if sentence in hyps:  # nbest > 1: the first is the best
                continue
            pieces = fields[2].split(" ") if len(fields) > 2 and fields[2] else []
            hyps[sentence] = (float(fields[1]), [index.get(p, 3) for p in pieces])
    return hyps


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--weights", required=True, help="bench-generate --dump-weights output")
    ap.add_argument("--data", required=True, help="binarized data directory (csan-preprocess output)")
    ap.add_argument("--gen-subset", default="test")
    ap.add_argument("--source-lang", default="en")
    ap.add_argument("--target-lang", default="de")
    ap.add_argument("--beam", type=int, default=5)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--max-len-a", type=float, default=0.0)
    ap.add_argument("--max-len-b", type=int, default=200)
    ap.add_argument("--min-len", type=int, default=1)
    ap.add_argument("--lenpen", type=float, default=1.0)
    ap.add_argument("--precision", default="fp32", choices=["fp32", "bf16", "int8"],
                    help="projections in bf16 or int8 (as csan-generate --precision), the rest in fp32")
    ap.add_argument("--output", help="write the best hypotheses' token ids here, one sentence per line")
    ap.add_argument("--compare", help="csan-generate --output-format fairseq output to compare with")
    args = ap.parse_args()

    options, params = read_weights(args.weights)
    model = Transformer(options, params, args.precision)
    if args.precision == "int8":
        engines = torch.backends.quantized.supported_engines
        torch.backends.quantized.engine = next(e for e in ("x86", "fbgemm", "onednn", "qnnpack") if e in engines)
    pair = "%s-%s" % (args.source_lang, args.target_lang)
    prefix = "%s/%s.%s." % (args.data, args.gen_subset, pair)
    src = read_indexed(prefix + args.source_lang)
    symbols = read_dictionary("%s/dict.%s.txt" % (args.data, args.target_lang))
    src_vocab = len(read_dictionary("%s/dict.%s.txt" % (args.data, args.source_lang)))
    if src_vocab != model.src_embed.size(0) or len(symbols) != model.out_proj.size(0):
        sys.exit("%s: dictionaries of %d/%d symbols, the model has %d/%d rows (other data?)"
                 % (args.data, src_vocab, len(symbols), model.src_embed.size(0), model.out_proj.size(0)))
    max_source = int(options["max_source_positions"])
    src = [s if len(s) <= max_source else np.append(s[: max_source - 1], model.eos) for s in src]

    # Length-sorted batches as csan-generate makes them; empty sources (only </s>) stay empty.
    order = sorted((i for i in range(len(src)) if len(src[i]) > 1), key=lambda i: len(src[i]))
    results = [(0.0, [])] * len(src)
    torch.set_grad_enabled(False)
    start = time.perf_counter()
    with torch.inference_mode():
        for b in range(0, len(order), args.batch_size):
            batch = order[b : b + args.batch_size]
            width = max(len(src[i]) for i in batch)
            src_tokens = torch.full((len(batch), width), model.pad, dtype=torch.long)
            for row, i in enumerate(batch):
                src_tokens[row, : len(src[i])] = torch.from_numpy(src[i])
            src_lengths = torch.tensor([len(src[i]) for i in batch])
            best = beam_search(model, src_tokens, src_lengths, args.beam, args.max_len_a, args.max_len_b,
                               args.min_len, args.lenpen, int(options["max_target_positions"]))
            for i, hyp in zip(batch, best):
                results[i] = hyp
    seconds = time.perf_counter() - start
    tokens = sum(len(h) for _, h in results)
    print("pytorch eager: %d sentences, %d target tokens, %.2f s, %.1f sentences/s, %.1f target tokens/s, "
          "%d threads, %s" % (len(src), tokens, seconds, len(src) / seconds, tokens / seconds, torch.get_num_threads(),
                              args.precision))

    if args.output:
        with open(args.output, "w") as f:
            for _, hyp in results:
                f.write(" ".join(map(str, hyp)) + "\n")
    if args.compare:
        csan = read_csan_hypotheses(args.compare, symbols)
        differ = []
        for i, (score, hyp) in enumerate(results):
            theirs = csan.get(i)
            if theirs is None or theirs[1] != hyp[:-1]:
                differ.append((i, score / math.log(2), theirs[0] if theirs else float("nan")))
        print("compared with %s: %d of %d best hypotheses differ" % (args.compare, len(differ), len(results)))
        for i, ours, theirs in differ:
            print("  sentence %d: score %.6f here, %.6f in csan (base 2)" % (i, ours, theirs))


if __name__ == "__main__":
    main()
