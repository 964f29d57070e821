#!/usr/bin/env bash
# Memory of decoding (issue 20, item 6): peak RSS (/usr/bin/time -v) of csan-generate for one
# model in each form a user decodes it, at one sentence and at a batch:
#   tools/bench/generate-memory.sh CHECKPOINT INPUT [SENTENCES]
# CHECKPOINT is a training checkpoint (with optimizer state). The script writes, beside it in a
# scratch folder, its weights-only fp32 form (average-checkpoints of it) and its bf16 and int8
# inference checkpoints (convert-checkpoint), then decodes the first line and the first
# SENTENCES lines (default 64) of INPUT with each (beam 5, --max-len-b 20: the same number of
# steps for every form), in fp32, fp32, bf16 and int8. Also prints the process floor
# (csan-generate --help: LibTorch and its shared libraries).
# ALLOCATOR=jemalloc|tcmalloc preloads that allocator into csan-generate (for comparisons);
# CSAN_BUILD_DIR as elsewhere.
source "$(dirname "$0")/../script-help.sh"
help_if_asked "$0" "$@"
set -euo pipefail
checkpoint=${1:?usage: generate-memory.sh CHECKPOINT INPUT [SENTENCES]}
input=${2:?usage: generate-memory.sh CHECKPOINT INPUT [SENTENCES]}
sentences=${3:-64}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${CSAN_BUILD_DIR:-$root/build}
[ -x /usr/bin/time ] || { echo "generate-memory.sh: needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
[ -r "$checkpoint" ] || { echo "generate-memory.sh: $checkpoint: cannot read" >&2; exit 2; }
[ -r "$input" ] || { echo "generate-memory.sh: $input: cannot read" >&2; exit 2; }
preload=()
case ${ALLOCATOR:-} in
  "") ;;
  jemalloc) preload=(env LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2) ;;
  tcmalloc) preload=(env LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4) ;;
  *) echo "generate-memory.sh: unknown ALLOCATOR '$ALLOCATOR' (jemalloc, tcmalloc)" >&2; exit 2 ;;
esac
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
head -n 1 "$input" > "$work/one.txt"
head -n "$sentences" "$input" > "$work/batch.txt"
"$build/tools/average-checkpoints" --inputs "$checkpoint" --output "$work/fp32.pt" > /dev/null
"$build/tools/convert-checkpoint" --input "$checkpoint" --output "$work/bf16.pt" --precision bf16 > /dev/null
"$build/tools/convert-checkpoint" --input "$checkpoint" --output "$work/int8.pt" --precision int8 > /dev/null
peak_mib() { awk '/Maximum resident set size/ {printf "%.0f", $NF / 1024}' "$1"; }
/usr/bin/time -v -o "$work/floor.time" "${preload[@]}" "$build/cli/csan-generate" --help > /dev/null
echo "process floor (csan-generate --help): $(peak_mib "$work/floor.time") MiB${ALLOCATOR:+ (allocator $ALLOCATOR)}"
printf '%-28s %9s %9s %9s\n' "checkpoint (precision)" "file MiB" "1 sent." "$sentences sent."
for form in training weights bf16 int8; do
  case $form in
    training) path=$checkpoint precision=fp32 ;;
    weights) path=$work/fp32.pt precision=fp32 ;;
    bf16) path=$work/bf16.pt precision=bf16 ;;
    int8) path=$work/int8.pt precision=int8 ;;
  esac
  peaks=()
  for text in one batch; do
    /usr/bin/time -v -o "$work/$form-$text.time" "${preload[@]}" "$build/cli/csan-generate" --path "$path" \
      --input "$work/$text.txt" --beam 5 --max-len-b 20 --precision "$precision" > /dev/null 2> "$work/log" ||
      { tail -3 "$work/log" >&2; exit 1; }
    peaks+=("$(peak_mib "$work/$form-$text.time")")
  done
  printf '%-28s %9.0f %9s %9s\n' "$form ($precision)" "$(($(stat -c %s "$path") / 1048576))" "${peaks[0]}" "${peaks[1]}"
done
