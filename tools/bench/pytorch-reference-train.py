#!/usr/bin/env python3
"""The issue's yardstick for csan-train's speed: a plain PyTorch eager training loop of
the same model (fairseq's post-norm transformer with one shared embedding), label-smoothed
cross-entropy and Adam, run on the SAME batches as bench-train, so the two figures can be
taken side by side in one sitting.

    bench-train --data D --source-lang en --target-lang de --recipe R --dump-batches B.txt
    OMP_NUM_THREADS=2 /usr/bin/python3 tools/bench/pytorch-reference-train.py --data D \
        --source-lang en --target-lang de --batches B.txt --embed-dim 256 --ffn-dim 1024 \
        --heads 4 --layers 3

Needs Debian's python3-torch (the same LibTorch 1.13 and OpenBLAS as csan); a bench
helper, not part of the build or the tests. Prints target tokens/s counted as fairseq's
wps: non-padding target tokens (</s> included) per wall second of the timed updates,
batch assembly included.
"""
import argparse
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

from indexed_dataset import read_indexed

PAD, EOS = 1, 2


def collate(indices, src, tgt):
    """fairseq's collater: source left-padded, target and prev_output_tokens right-padded."""
    s_len = max(len(src[i]) for i in indices)
    t_len = max(len(tgt[i]) for i in indices)
    src_tokens = torch.full((len(indices), s_len), PAD, dtype=torch.long)
    target = torch.full((len(indices), t_len), PAD, dtype=torch.long)
    prev = torch.full((len(indices), t_len), PAD, dtype=torch.long)
    for row, i in enumerate(indices):
        s, t = torch.from_numpy(src[i]), torch.from_numpy(tgt[i])
        src_tokens[row, s_len - len(s) :] = s
        target[row, : len(t)] = t
        prev[row, 0] = EOS
        prev[row, 1 : len(t)] = t[:-1]
    return src_tokens, prev, target


def sinusoidal(rows, dim):
    half = dim // 2
    scale = math.log(10000) / (half - 1)
    freqs = torch.exp(torch.arange(half, dtype=torch.float) * -scale)
    angles = torch.arange(rows, dtype=torch.float).unsqueeze(1) * freqs.unsqueeze(0)
    table = torch.cat([torch.sin(angles), torch.cos(angles)], dim=1)
    table[PAD] = 0
    return table


class Layer(nn.Module):
    """Post-norm layer: x = LN(x + dropout(sublayer(x))) for each sublayer."""

    def __init__(self, d, heads, ffn, dropout, cross):
        super().__init__()
        self.self_attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.self_norm = nn.LayerNorm(d)
        self.cross_attn = nn.MultiheadAttention(d, heads, batch_first=True) if cross else None
        self.cross_norm = nn.LayerNorm(d) if cross else None
        self.fc1, self.fc2 = nn.Linear(d, ffn), nn.Linear(ffn, d)
        self.ffn_norm = nn.LayerNorm(d)
        self.dropout = dropout

    def forward(self, x, pad_mask, causal=None, memory=None, memory_pad=None):
        drop = lambda y: F.dropout(y, self.dropout, self.training)
        y, _ = self.self_attn(x, x, x, key_padding_mask=pad_mask, attn_mask=causal, need_weights=False)
        x = self.self_norm(x + drop(y))
        if self.cross_attn is not None:
            y, _ = self.cross_attn(x, memory, memory, key_padding_mask=memory_pad, need_weights=False)
            x = self.cross_norm(x + drop(y))
        return self.ffn_norm(x + drop(self.fc2(F.relu(self.fc1(x)))))


class Transformer(nn.Module):
    def __init__(self, vocab, d, heads, ffn, layers, dropout):
        super().__init__()
        self.embed = nn.Embedding(vocab, d, padding_idx=PAD)
        nn.init.normal_(self.embed.weight, 0, d**-0.5)
        self.register_buffer("positions", sinusoidal(1026, d))
        self.encoder = nn.ModuleList(Layer(d, heads, ffn, dropout, False) for _ in range(layers))
        self.decoder = nn.ModuleList(Layer(d, heads, ffn, dropout, True) for _ in range(layers))
        self.scale, self.dropout = math.sqrt(d), dropout

    def embed_tokens(self, tokens):
        mask = tokens.ne(PAD)
        positions = torch.cumsum(mask, dim=1) * mask + PAD
        x = self.embed(tokens) * self.scale + self.positions[positions]
        return F.dropout(x, self.dropout, self.training), ~mask

    def forward(self, src, prev):
        x, src_pad = self.embed_tokens(src)
        for layer in self.encoder:
            x = layer(x, src_pad)
        y, tgt_pad = self.embed_tokens(prev)
        t = prev.size(1)
        causal = torch.triu(torch.full((t, t), float("-inf")), 1)
        for layer in self.decoder:
            y = layer(y, None, causal, x, src_pad)
        return F.linear(y, self.embed.weight)


def label_smoothed_loss(logits, target, eps):
    lprobs = F.log_softmax(logits, dim=-1).view(-1, logits.size(-1))
    target = target.view(-1, 1)
    keep = target.ne(PAD)
    nll = -lprobs.gather(1, target)[keep].sum()
    smooth = -lprobs.sum(dim=-1, keepdim=True)[keep].sum()
    eps_i = eps / (lprobs.size(-1) - 1)
    return (1.0 - eps - eps_i) * nll + eps_i * smooth


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", required=True)
    ap.add_argument("--source-lang", required=True)
    ap.add_argument("--target-lang", required=True)
    ap.add_argument("--batches", required=True, help="bench-train --dump-batches output")
    ap.add_argument("--embed-dim", type=int, default=256)
    ap.add_argument("--ffn-dim", type=int, default=1024)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--layers", type=int, default=3)
    ap.add_argument("--dropout", type=float, default=0.1)
    ap.add_argument("--label-smoothing", type=float, default=0.1)
    ap.add_argument("--precision", choices=["fp32", "bf16"], default="fp32",
                    help="bf16: forward and loss under torch.autocast('cpu', dtype=torch.bfloat16), "
                         "PyTorch's own mixed precision (fp32 weights, optimizer and gradients)")
    a = ap.parse_args()

    torch.manual_seed(1)
    pair = f"{a.source_lang}-{a.target_lang}"
    src = read_indexed(f"{a.data}/train.{pair}.{a.source_lang}")
    tgt = read_indexed(f"{a.data}/train.{pair}.{a.target_lang}")
    with open(f"{a.data}/dict.{a.target_lang}.txt", encoding="utf-8") as f:
        vocab = 4 + sum(1 for _ in f)
    batches = []
    with open(a.batches) as f:
        for line in f:
            kind, *ids = line.split()
            batches.append((kind, [int(i) for i in ids]))

    model = Transformer(vocab, a.embed_dim, a.heads, a.ffn_dim, a.layers, a.dropout)
    model.train()
    params = sum(p.numel() for p in model.parameters())
    optimizer = torch.optim.Adam(model.parameters(), lr=5e-4, betas=(0.9, 0.98), eps=1e-8)
    tokens, seconds = 0, 0.0
    for kind, ids in batches:
        start = time.perf_counter()
        src_tokens, prev, target = collate(ids, src, tgt)
        optimizer.zero_grad(set_to_none=True)
        ntokens = int(target.ne(PAD).sum())
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=a.precision == "bf16"):
            logits = model(src_tokens, prev)
        # The loss in fp32, as autocast users are told to do (and as csan's bf16 does).
        loss = label_smoothed_loss(logits.float(), target, a.label_smoothing)
        (loss / ntokens).backward()
        optimizer.step()
        elapsed = time.perf_counter() - start
        if kind == "timed":
            tokens += ntokens
            seconds += elapsed
    print(f"pytorch eager {a.precision} {params} parameters, {torch.get_num_threads()} threads: "
          f"{seconds:.2f} s {tokens / seconds:.0f} target tokens/s ({tokens} tokens)")


if __name__ == "__main__":
    main()
