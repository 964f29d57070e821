#!/usr/bin/python3
"""Tables of run.sh: medians over rounds, BLEU, identical lines and peak RSS of csan and
CTranslate2, with the issue's goals (issue 37, part 5: csan at least 1.3x CTranslate2's speed
in fp32 and 1.5x in int8 at equal BLEU; peak RSS at most 1.25x CTranslate2's).

  summarize.py --work DIR --reference TEST.tgt --check-reference CHECK.tgt --score csan-score
  summarize.py --parse-bench BENCH_OUTPUT --layout NAME --round N   (run.sh: one JSON line
                                                                     per precision)"""

import argparse
import json
import re
import statistics
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

SPEED_GOAL = {"fp32": 1.3, "int8": 1.5}
RSS_GOAL = 1.25


def parse_bench(path, layout, round_):
    """bench-generate's report: a name line per precision (when several), then its timing."""
    text = Path(path).read_text()
    names = re.findall(r"^  (\S+)\s+[\d.]+x ", text, re.M)
    timings = re.findall(r"^  [\d.]+ s  ([\d.]+) sentences/s  ([\d.]+) target tokens/s", text, re.M)
    if not timings or (names and len(names) != len(timings)):
        sys.exit(f"summarize.py: {path}: not a bench-generate report")
    for name, (sentences, tokens) in zip(names or ["fp32"], timings):
        print(json.dumps({"engine": "csan", "precision": name, "layout": layout, "round": round_,
                          "sent_per_s": float(sentences), "tgt_tok_per_s": float(tokens)}))


def bleu(score, reference, hypothesis):
    if not Path(hypothesis).is_file():
        return None
    done = subprocess.run([score, reference, "-i", str(hypothesis), "-m", "bleu", "-b"],
                          capture_output=True, text=True, check=True)
    return float(done.stdout.strip())


def identical(a, b):
    if not (Path(a).is_file() and Path(b).is_file()):
        return "-"
    left, right = Path(a).read_text().splitlines(), Path(b).read_text().splitlines()
    return f"{sum(x == y for x, y in zip(left, right))}/{max(len(left), len(right))}"


def median_and_range(values):
    """"-" for no runs, the median alone for one, "median (min-max)" for several."""
    if not values:
        return "-"
    spread = f" ({min(values):.0f}-{max(values):.0f})" if len(values) > 1 else ""
    return f"{statistics.median(values):.0f}{spread}"


def rss_table(rss):
    """Peak RSS of whole processes in the two matching layouts: medians over runs (and their
    range), the ratio of the medians against the goal."""
    pairs = (("one batch per thread", "default", "inter"), ("one batch on all threads", "pb1", "intra"))
    out = ["Peak RSS of the whole process translating the file, MiB: median over runs (range).", "",
           "| precision | layout | csan | CT2 | csan / CT2 | goal |", "|---|---|--:|--:|--:|--:|"]
    shown = False
    for precision in ("fp32", "int8"):
        for label, csan_layout, ct2_layout in pairs:
            c, k = rss.get(("csan", precision, csan_layout)), rss.get(("ct2", precision, ct2_layout))
            if not c and not k:
                continue
            shown = True
            ratio = statistics.median(c) / statistics.median(k) if c and k else None
            goal = "-" if ratio is None else f"{RSS_GOAL}x {'met' if ratio <= RSS_GOAL else 'not met'}"
            out.append(f"| {precision} | {label} (csan {csan_layout}, CT2 {ct2_layout}) | {median_and_range(c)} | {median_and_range(k)} | "
                       f"{'-' if ratio is None else f'{ratio:.2f}x'} | {goal} |")
    return out + [""] if shown else []


def summarize(args):
    work = Path(args.work)
    rows = [json.loads(line) for line in (work / "results.jsonl").read_text().splitlines() if line.strip()]
    speeds = defaultdict(list)
    rss = defaultdict(list)  # (engine, precision, layout or None for floors) -> MiB of each run
    for row in rows:
        if "sent_per_s" in row:
            speeds[(row["engine"], row["precision"], row["layout"])].append(row["sent_per_s"])
        if "rss_kib" in row:
            rss[(row["engine"], row["precision"], row.get("layout"))].append(row["rss_kib"] / 1024)
    median = {key: statistics.median(values) for key, values in speeds.items()}
    hyp = work / "hyp"
    t = args.threads
    out = ["# csan against CTranslate2 (tools/bench/ctranslate2/run.sh)", ""]
    backends = work / "logs" / "ct2-backends.txt"
    if backends.is_file() and backends.read_text().strip():
        out += ["CTranslate2's own log of its CPU backends in this run:", "", "```"]
        # Without spdlog's "[time] [logger] [thread] [level] " prefix.
        out += [re.sub(r"^(\[[^\]]*\] )+", "", line) for line in backends.read_text().splitlines()]
        out += ["```", ""]
    check = (hyp / "check.csan.txt", hyp / "check.ct2.txt")
    if check[0].is_file():
        out.append(f"Check, first 200 sentences, fp32: identical lines {identical(*check)}; BLEU csan "
                   f"{bleu(args.score, args.check_reference, check[0])}, CTranslate2 "
                   f"{bleu(args.score, args.check_reference, check[1])}.")
        out.append("")
    out += [f"Sentences/s, medians over rounds ({t} threads, beam 5, batch 64). csan: default = one batch per "
            f"thread, pb1 = one batch on all threads; CTranslate2: intra = intra_threads {t}, inter = "
            f"inter_threads {t}. The ratio takes each engine's faster layout.", "",
            "| precision | csan default | csan pb1 | CT2 intra | CT2 inter | csan / CT2 | goal | BLEU csan / CT2 "
            "| identical lines |",
            "|---|--:|--:|--:|--:|--:|--:|---|--:|"]
    for precision in ("fp32", "int8"):
        c = [median.get(("csan", precision, layout)) for layout in ("default", "pb1")]
        k = [median.get(("ct2", precision, layout)) for layout in ("intra", "inter")]
        best_c = max((v for v in c if v), default=None)
        best_k = max((v for v in k if v), default=None)
        ratio = best_c / best_k if best_c and best_k else None
        csan_hyp, ct2_hyp = hyp / f"csan.{precision}.txt", hyp / f"ct2.{precision}.txt"
        fmt = lambda v, f="{:.1f}": "-" if v is None else f.format(v)  # noqa: E731
        out.append(
            f"| {precision} | {fmt(c[0])} | {fmt(c[1])} | {fmt(k[0])} | {fmt(k[1])} | {fmt(ratio, '{:.2f}x')} | "
            f"{SPEED_GOAL[precision]}x {'met' if ratio and ratio >= SPEED_GOAL[precision] else 'not met'} | "
            f"{fmt(bleu(args.score, args.reference, csan_hyp))} / {fmt(bleu(args.score, args.reference, ct2_hyp))} | "
            f"{identical(csan_hyp, ct2_hyp)} |")
    out.append("")
    out += rss_table(rss)
    floors = (rss.get(("csan", "floor", None)), rss.get(("ct2", "floor", None)))
    if all(floors):
        out.append(f"Process floors (peak RSS): `csan-generate --help` {floors[0][0]:.0f} MiB; Python with "
                   f"ctranslate2 and sentencepiece imported {floors[1][0]:.0f} MiB.")
        out.append("")
    out.append("Each round (best of the repeats), sentences/s:")
    out.append("")
    for (engine, precision, layout), values in sorted(speeds.items()):
        out.append(f"- {engine} {precision} {layout}: " + ", ".join(f"{v:.1f}" for v in values))
    print("\n".join(out))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--parse-bench")
    parser.add_argument("--layout")
    parser.add_argument("--round", type=int)
    parser.add_argument("--work")
    parser.add_argument("--reference")
    parser.add_argument("--check-reference")
    parser.add_argument("--score")
    parser.add_argument("--threads", default="2")
    args = parser.parse_args()
    if args.parse_bench:
        parse_bench(args.parse_bench, args.layout, args.round)
    elif args.work and args.reference and args.score:
        summarize(args)
    else:
        parser.error("--parse-bench with --layout/--round, or --work with --reference and --score")


if __name__ == "__main__":
    main()
