#!/usr/bin/env bash
# Loading for inference, checkpoint format 2 against format 3 (issue 37, part 5): time to the
# first translation and peak RSS of csan-generate translating one sentence, fp32 and int8,
# side by side:
#   tools/bench/load-time.sh CHECKPOINT INPUT [ROUNDS]
# CHECKPOINT is a format 2 training checkpoint (e.g. transformer_base, written by a csan before
# format 3). OLD_BUILD (a build that writes format 2, e.g. /work/base/build) converts it to a
# format 2 int8 checkpoint; this build (CSAN_BUILD_DIR as elsewhere) rewrites both as format 3
# (convert-checkpoint --format 3). Each form decodes the first line of INPUT (beam 5) ROUNDS
# times (default 5), the forms alternating round by round; the table gives the median wall
# time of the whole process (start, load, one translation, exit) and the median peak RSS
# (/usr/bin/time -v). The files are in the page cache after the first round (warm loading:
# what a server restart sees); the format 2 reader copies every tensor out of the file, the
# format 3 one maps it (fp32, bf16 and int8 weights used in place).
source "$(dirname "$0")/../script-help.sh"
help_if_asked "$0" "$@"
set -euo pipefail
usage="usage: load-time.sh CHECKPOINT INPUT [ROUNDS] (OLD_BUILD=a format 2 build)"
checkpoint=${1:?$usage}
input=${2:?$usage}
rounds=${3:-5}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${CSAN_BUILD_DIR:-$root/build}
old_build=${OLD_BUILD:?$usage}
[ -x /usr/bin/time ] || { echo "load-time.sh: needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
[ -r "$checkpoint" ] || { echo "load-time.sh: $checkpoint: cannot read" >&2; exit 2; }
[ -r "$input" ] || { echo "load-time.sh: $input: cannot read" >&2; exit 2; }
[ "$(head -c 2 "$checkpoint")" = PK ] || { echo "load-time.sh: $checkpoint: not a format 2 checkpoint" >&2; exit 2; }
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
head -n 1 "$input" > "$work/one.txt"
"$old_build/tools/average-checkpoints" --inputs "$checkpoint" --output "$work/fp32.f2.pt" > /dev/null
"$old_build/tools/convert-checkpoint" --input "$checkpoint" --output "$work/int8.f2.pt" --precision int8 \
  > /dev/null 2>&1
"$build/tools/convert-checkpoint" --input "$work/fp32.f2.pt" --output "$work/fp32.f3.pt" --format 3 > /dev/null 2>&1
"$build/tools/convert-checkpoint" --input "$work/int8.f2.pt" --output "$work/int8.f3.pt" --format 3 > /dev/null 2>&1
forms=(fp32.f2 fp32.f3 int8.f2 int8.f3)
for ((round = 1; round <= rounds; round++)); do
  for form in "${forms[@]}"; do
    /usr/bin/time -v -o "$work/$form.$round.time" "$build/cli/csan-generate" --path "$work/$form.pt" \
      --input "$work/one.txt" --beam 5 --precision "${form%%.*}" > "$work/$form.out" 2> "$work/log" ||
      { tail -3 "$work/log" >&2; exit 1; }
  done
done
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
seconds() { awk '/Elapsed \(wall clock\)/ {n = split($NF, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s}' "$@"; }
peak_mib() { awk '/Maximum resident set size/ {printf "%.0f\n", $NF / 1024}' "$@"; }
# The outputs without their timing line ("Translated 1 sentences ... in 0.1s").
same_output() { cmp -s <(grep -v '^Translated ' "$1") <(grep -v '^Translated ' "$2"); }
same_output "$work/fp32.f2.out" "$work/fp32.f3.out" || echo "load-time.sh: fp32 translations differ between formats" >&2
same_output "$work/int8.f2.out" "$work/int8.f3.out" || echo "load-time.sh: int8 translations differ between formats" >&2
printf '%-12s %8s %12s %14s\n' "form" "file MiB" "first s" "peak RSS MiB"
for form in "${forms[@]}"; do
  wall=$(for ((r = 1; r <= rounds; r++)); do seconds "$work/$form.$r.time"; done | median)
  rss=$(for ((r = 1; r <= rounds; r++)); do peak_mib "$work/$form.$r.time"; done | median)
  printf '%-12s %8.0f %12.2f %14.0f\n' "$form" "$(($(stat -c %s "$work/$form.pt") / 1048576))" "$wall" "$rss"
done
