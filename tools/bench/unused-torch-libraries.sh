#!/usr/bin/env bash
# What the stand-ins for the libraries LibTorch names but does not use save
# (docs/development.md, "Libraries LibTorch names but does not use"): csan-generate as built
# against a copy of it whose needed list has the stand-ins removed again (patchelf), so that
# it loads every library LibTorch names, as before. Alternating the two, ROUNDS (5) times:
#   - `--help`: wall time and peak RSS (the process floor: loading LibTorch);
#   - the first line of INPUT translated (time to the first translation) and all of INPUT,
#     with each CHECKPOINT given: wall time and peak RSS.
# Prints the medians and their ratios (with / without the stand-ins).
#   tools/bench/unused-torch-libraries.sh INPUT CHECKPOINT...
# Needs /usr/bin/time and patchelf (apt-get install time patchelf); CSAN_BUILD_DIR as elsewhere.
source "$(dirname "$0")/../script-help.sh"
help_if_asked "$0" "$@"
set -euo pipefail
usage="usage: unused-torch-libraries.sh INPUT CHECKPOINT... (see --help)"
input=${1:?$usage}; shift
[ $# -gt 0 ] || { echo "unused-torch-libraries.sh: no CHECKPOINT ($usage)" >&2; exit 2; }
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${CSAN_BUILD_DIR:-$root/build}
rounds=${ROUNDS:-5}
[ -r "$input" ] || { echo "unused-torch-libraries.sh: $input: cannot read" >&2; exit 2; }
for checkpoint in "$@"; do
  [ -r "$checkpoint" ] || { echo "unused-torch-libraries.sh: $checkpoint: cannot read" >&2; exit 2; }
done
generate=$build/cli/csan-generate
stand_ins=$build/unused-torch-libraries
[ -d "$stand_ins" ] && [ -n "$(ls -A "$stand_ins")" ] ||
  { echo "unused-torch-libraries.sh: $stand_ins: no stand-ins (this LibTorch gets none, or the option is off)" >&2; exit 2; }
for tool in /usr/bin/time patchelf; do
  command -v "$tool" > /dev/null || { echo "unused-torch-libraries.sh: needs $tool (apt-get install time patchelf)" >&2; exit 2; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$generate" "$work/csan-generate-all-libraries"
for soname in $(ls "$stand_ins"); do patchelf --remove-needed "$soname" "$work/csan-generate-all-libraries"; done
head -n 1 "$input" > "$work/one.txt"
echo "libraries loaded: with stand-ins $(ldd "$generate" | wc -l), without $(ldd "$work/csan-generate-all-libraries" | wc -l)"

measure() {  # measure LABEL PROGRAM ARGS...: appends "LABEL seconds KiB" to $work/times
  local label=$1; shift
  /usr/bin/time -f "%e %M" -o "$work/t" "$@" > /dev/null 2> "$work/stderr" ||
    { cat "$work/stderr" >&2; exit 1; }
  echo "$label $(cat "$work/t")" >> "$work/times"
}
for ((round = 1; round <= rounds; round++)); do
  for variant in stand-ins all; do
    program=$generate; [ $variant = all ] && program=$work/csan-generate-all-libraries
    measure "$variant help" "$program" --help
    for checkpoint in "$@"; do
      name=$(basename "$checkpoint")
      measure "$variant first:$name" "$program" --path "$checkpoint" --input "$work/one.txt" --output-format plain
      measure "$variant file:$name" "$program" --path "$checkpoint" --input "$input" --output-format plain
    done
  done
done
/usr/bin/python3 - "$work/times" "$rounds" <<'EOF'
import statistics, sys
from collections import defaultdict
rows = defaultdict(list)
for line in open(sys.argv[1]):
    variant, what, seconds, kib = line.split()
    rows[(variant, what)].append((float(seconds), int(kib) / 1024))
print(f"medians of {sys.argv[2]} alternating rounds; ratio = with stand-ins / all libraries")
print(f"{'run':26} {'s with':>6} {'s all':>6} {'ratio':>6} {'MiB with (range)':>17} {'MiB all (range)':>17} {'ratio':>6}")
for what in dict.fromkeys(w for _, w in rows):
    a, b = rows[("stand-ins", what)], rows[("all", what)]
    ta, tb = statistics.median(x[0] for x in a), statistics.median(x[0] for x in b)
    ma, mb = statistics.median(x[1] for x in a), statistics.median(x[1] for x in b)
    span = lambda v: f"{statistics.median(x[1] for x in v):.0f} ({min(x[1] for x in v):.0f}-{max(x[1] for x in v):.0f})"
    print(f"{what:26} {ta:6.2f} {tb:6.2f} {ta / tb:6.2f} {span(a):>17} {span(b):>17} {ma / mb:6.2f}")
EOF
