#!/usr/bin/python3
"""Translates raw text with a CTranslate2 model from convert.py, with csan-generate's search
settings, and times it: model loading and SentencePiece are outside the timing, as they are
outside bench-generate's.

  translate.py --model DIR --spm spm.model --input SRC [--output HYP] [--compute-type int8]
               [--intra-threads 2 --inter-threads 1] [--repeats 2] [--label NAME]

Search as csan-generate's defaults: beam 5, length penalty 1 with </s> counted in the length
(return_end_token, stripped from the output), at least 1 token, at most 200 tokens + </s>,
batches of 64 sentences. Prints one JSON line per timed run, then a summary line (the best
run); writes the last run's translations to --output."""

import argparse
import json
import sys
import time

import sentencepiece

# CTranslate2's specs import torch when it is installed, and only converters need it: keep it
# out, as in a deployment without torch, so that the peak RSS is the engine's.
sys.modules.setdefault("torch", None)
import ctranslate2  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--spm", required=True)
    parser.add_argument("--input", required=True)
    parser.add_argument("--output")
    parser.add_argument("--compute-type", default="default")
    parser.add_argument("--intra-threads", type=int, default=2)
    parser.add_argument("--inter-threads", type=int, default=1)
    parser.add_argument("--beam", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--max-len", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--label", default="ct2")
    args = parser.parse_args()

    pieces = sentencepiece.SentencePieceProcessor(model_file=args.spm)
    with open(args.input, encoding="utf-8") as f:
        lines = [line.rstrip("\n") for line in f]
    source = [pieces.encode(line, out_type=str) for line in lines]

    started = time.perf_counter()
    translator = ctranslate2.Translator(args.model, device="cpu", compute_type=args.compute_type,
                                        intra_threads=args.intra_threads, inter_threads=args.inter_threads)
    load_seconds = time.perf_counter() - started
    options = dict(max_batch_size=args.batch_size, batch_type="examples", beam_size=args.beam,
                   length_penalty=1.0, max_decoding_length=args.max_len + 1, min_decoding_length=1,
                   return_end_token=True, return_scores=False)
    runs = []
    for repeat in range(args.repeats):
        started = time.perf_counter()
        results = translator.translate_batch(source, **options)
        seconds = time.perf_counter() - started
        hypotheses = [r.hypotheses[0][:-1] if r.hypotheses[0][-1:] == ["</s>"] else r.hypotheses[0]
                      for r in results]
        target_tokens = sum(len(h) + 1 for h in hypotheses)  # + </s>, as csan counts them
        run = dict(label=args.label, repeat=repeat, sentences=len(lines), seconds=round(seconds, 4),
                   sent_per_s=round(len(lines) / seconds, 2), tgt_tok_per_s=round(target_tokens / seconds, 1))
        runs.append(run)
        print(json.dumps(run), flush=True)
    best = min(runs, key=lambda r: r["seconds"])
    print(json.dumps(dict(label=args.label, summary=True, load_s=round(load_seconds, 3),
                          compute_type=translator.compute_type, best_sent_per_s=best["sent_per_s"],
                          best_tgt_tok_per_s=best["tgt_tok_per_s"])), flush=True)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            for h in hypotheses:
                f.write(pieces.decode_pieces(h) + "\n")


if __name__ == "__main__":
    sys.exit(main())
