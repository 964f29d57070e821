#!/usr/bin/python3
# csan.Translator against csan-generate on the same checkpoint, raw input and settings:
# sentences/s of each (csan-generate's own figure from its "Translated ..." line, which
# leaves out loading; Translator.translate timed around the call on a loaded Translator),
# alternating ROUNDS times so that load from other processes hits both alike, and the
# outputs checked identical. Then the Python overhead of a call with decoding left out:
# translate([]) (argument checks, the binding, GIL release) and translate([""]) (also the
# request queue and the C++ batching of an empty sentence, which decodes nothing), the
# median of CALLS calls each on the warm Translator.
#   /usr/bin/python3 tools/bench/python-translate.py CKPT [--input ../shared/data/multi30k/test2016.de]
#       [--build build] [--beam 5] [--precision fp32] [--threads 2] [--rounds 3] [--calls 2000]
import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("checkpoint")
parser.add_argument("--input", default=str(ROOT.parent / "shared/data/multi30k/test2016.de"))
parser.add_argument("--build", default=str(ROOT / "build"))
parser.add_argument("--beam", type=int, default=5)
parser.add_argument("--precision", default="fp32")
parser.add_argument("--threads", type=int, default=2)
parser.add_argument("--rounds", type=int, default=3)
parser.add_argument("--calls", type=int, default=2000)
args = parser.parse_args()
build = Path(args.build).resolve()
sys.path.insert(0, str(build / "python"))
os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
import csan  # noqa: E402

lines = Path(args.input).read_text(encoding="utf-8").splitlines()
translator = csan.Translator(args.checkpoint, precision=args.precision, threads=args.threads)


def generate() -> tuple:
    done = subprocess.run(
        [str(build / "cli/csan-generate"), "--path", args.checkpoint, "--input", args.input, "--output-format",
         "plain", "--beam", str(args.beam), "--precision", args.precision, "--threads", str(args.threads)],
        capture_output=True, text=True, check=True)
    rate = re.search(r"([\d.]+) sentences/s", done.stderr)
    if not rate:
        sys.exit(f"python-translate: no 'sentences/s' in csan-generate's log:\n{done.stderr}")
    return float(rate.group(1)), done.stdout.split("\n")[:-1]


print(f"{len(lines)} sentences of {args.input}, beam {args.beam}, {args.precision}, {args.threads} threads")
ratios = []
for round in range(1, args.rounds + 1):
    cli_rate, cli_out = generate()
    start = time.perf_counter()
    py_out = translator.translate(lines, beam=args.beam)
    py_rate = len(lines) / (time.perf_counter() - start)
    if py_out != cli_out:
        sys.exit(f"round {round}: the outputs differ")
    ratios.append(py_rate / cli_rate)
    print(f"round {round}: csan-generate {cli_rate:.1f}, Translator.translate {py_rate:.1f} sentences/s: "
          f"{py_rate / cli_rate:.3f}x")
print(f"median Translator / csan-generate: {statistics.median(ratios):.3f}x")

for label, call in (("translate([])", lambda: translator.translate([])),
                    ('translate([""])', lambda: translator.translate([""]))):
    times = []
    for _ in range(args.calls):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    print(f"{label}: median {statistics.median(times) * 1e3:.4f} ms, 99th percentile "
          f"{sorted(times)[int(0.99 * len(times))] * 1e3:.4f} ms over {args.calls} calls")
