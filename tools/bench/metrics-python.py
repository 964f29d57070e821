#!/usr/bin/python3
# csan.metrics (the Python package) against csan-score on the same files: corpus BLEU,
# chrF and TER, best of ROUNDS runs each, wall and CPU seconds (CPU: all threads; on a
# loaded machine it says more than wall). csan-score's time is a whole process (start,
# reading both files, scoring); csan.metrics' is given for the call alone and for reading
# the files in Python plus the call. Both scores must agree to 10 decimals (checked). If
# this Python has sacreBLEU, its time is printed too.
#   /usr/bin/python3 tools/bench/metrics-python.py [--build build] [--text ../shared/data/multi30k/train.de]
#       [--lines 29000] [--ter-lines 10000] [--rounds 3]
# The hypotheses are the reference lines with words dropped, swapped and replaced
# (seeded, rate 0.2), written to a temporary folder.
import argparse
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def perturb(line: str, rng: random.Random, rate: float = 0.2) -> str:
    words, out, i = line.split(), [], 0
    while i < len(words):
        u = rng.random()
        if u < rate / 3:
            pass
        elif u < 2 * rate / 3 and i + 1 < len(words):
            out += [words[i + 1], words[i]]
            i += 1
        elif u < rate:
            out.append(rng.choice(words))
        else:
            out.append(words[i])
        i += 1
    return " ".join(out)


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def own_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def best_of(rounds: int, body, cpu=own_cpu):
    """(result, best wall seconds, CPU seconds of that run)."""
    best = None
    for _ in range(rounds):
        cpu_start, start = cpu(), time.perf_counter()
        result = body()
        wall, used = time.perf_counter() - start, cpu() - cpu_start
        if best is None or wall < best[1]:
            best = (result, wall, used)
    return best


def read(path: Path):
    return path.read_text(encoding="utf-8").split("\n")[:-1]


def main() -> None:
    parser = argparse.ArgumentParser(description="csan.metrics against csan-score")
    parser.add_argument("--build", default=str(ROOT / "build"), help="the CMake build folder")
    parser.add_argument("--text", default=str(ROOT.parent / "shared" / "data" / "multi30k" / "train.de"))
    parser.add_argument("--lines", type=int, default=29000, help="lines for BLEU and chrF")
    parser.add_argument("--ter-lines", type=int, default=10000, help="lines for TER (slower)")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    build = Path(args.build).resolve()
    sys.path.insert(0, str(build / "python"))  # an installed csan is used when there is none
    import csan.metrics as metrics

    try:
        import sacrebleu  # type: ignore
    except ImportError:
        sacrebleu = None
    csan_score = build / "cli" / "csan-score"
    source = Path(args.text).read_text(encoding="utf-8").splitlines()
    rng = random.Random(7)
    threads = os.cpu_count()
    print(f"csan.metrics from {Path(metrics.__file__).parent}; {threads} cores; best of {args.rounds}")
    print(f"{'metric':6} {'lines':>6}  {'csan.metrics call':>20}  {'read+call':>20}  {'csan-score process':>20}"
          + (f"  {'sacreBLEU call':>20}" if sacrebleu else ""))
    with tempfile.TemporaryDirectory() as folder:
        for name, count in [("bleu", args.lines), ("chrf", args.lines), ("ter", args.ter_lines)]:
            refs = [source[i % len(source)] for i in range(count)]
            hyps = [perturb(line, rng) for line in refs]
            ref_file, hyp_file = Path(folder) / f"ref.{name}", Path(folder) / f"hyp.{name}"
            ref_file.write_text("\n".join(refs) + "\n", encoding="utf-8")
            hyp_file.write_text("\n".join(hyps) + "\n", encoding="utf-8")
            function = getattr(metrics, f"corpus_{name}")

            score, call, call_cpu = best_of(args.rounds, lambda: function(hyps, [refs]).score)
            _, whole, whole_cpu = best_of(args.rounds, lambda: function(read(hyp_file), [read(ref_file)]).score)
            command = [str(csan_score), str(ref_file), "-i", str(hyp_file), "-m", name, "-b", "-w", "10"]
            printed, process, process_cpu = best_of(
                args.rounds, lambda: subprocess.run(command, capture_output=True, text=True, check=True).stdout,
                cpu=children_cpu)
            if printed.strip() != f"{score:.10f}":
                sys.exit(f"{name}: csan-score printed {printed.strip()}, csan.metrics {score:.10f}")
            row = (f"{name.upper():6} {count:6d}  {call:7.3f} s {call_cpu:6.3f} cpu  {whole:7.3f} s {whole_cpu:6.3f} cpu"
                   f"  {process:7.3f} s {process_cpu:6.3f} cpu")
            if sacrebleu:
                _, theirs, theirs_cpu = best_of(1, lambda: getattr(sacrebleu, f"corpus_{name}")(hyps, [refs]).score)
                row += f"  {theirs:7.3f} s {theirs_cpu:6.3f} cpu"
            print(row)


if __name__ == "__main__":
    main()
