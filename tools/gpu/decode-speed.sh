#!/usr/bin/env bash
# GPU decoding speed per precision (the fast-CPU issue asks, where a task has a device, for
# fp16 and bf16 decoding on the GPU against fp32): csan-generate on one checkpoint, beam 5,
# the precisions alternating ROUNDS times so that a slow moment hits all alike; prints each
# run's sentences/s and BLEU, then each precision's best sentences/s relative to fp32's best.
#   tools/gpu/decode-speed.sh CHECKPOINT DATA_BIN [SUBSET] [ROUNDS] [BATCH]
# (defaults: test, 2 rounds, batch 64). Runs on the lent GPU machine after
# tools/gpu/experiments.sh or check.sh has built csan there (build-gpu, or
# CSAN_GPU_BUILD_DIR); CSAN_GPU_PRECISIONS (default "fp32 fp16 bf16") picks the precisions,
# CSAN_GPU_DECODE_TIMEOUT (default 60) bounds each run in seconds.
source "$(dirname "$0")/../script-help.sh"
help_if_asked "$0" "$@"
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
checkpoint=${1:?decode-speed.sh: CHECKPOINT DATA_BIN [SUBSET] [ROUNDS] [BATCH]}
data=${2:?decode-speed.sh: CHECKPOINT DATA_BIN [SUBSET] [ROUNDS] [BATCH]}
subset=${3:-test} rounds=${4:-2} batch=${5:-64}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
start=$(date +%s)
step() { echo "== [$(($(date +%s) - start)) s] $*"; }
source "$root/tools/gpu/build-env.sh"
[ -x "$bin/csan-generate" ] || { echo "decode-speed.sh: error: no $bin/csan-generate (build csan there first)" >&2; exit 1; }
read -r -a precisions <<< "${CSAN_GPU_PRECISIONS:-fp32 fp16 bf16}"
declare -A best=()
for round in $(seq "$rounds"); do
  for p in "${precisions[@]}"; do
    log=$out/$p-$round.log
    timeout "${CSAN_GPU_DECODE_TIMEOUT:-60}" "$bin/csan-generate" --path "$checkpoint" --data "$data" \
      --gen-subset "$subset" --beam 5 --batch-size "$batch" --precision "$p" \
      --results-path "$out/$p-$round" >"$log" 2>&1
    status=$?
    summary=$(grep -h -E 'sentences/s|BLEU' "$log" "$out/$p-$round/generate-$subset.txt" 2>/dev/null | sort -u)
    echo "round $round $p: exit $status"
    [ -n "$summary" ] && echo "$summary" | sed 's/^/  /' || tail -3 "$log" | sed 's/^/  /'
    rate=$(echo "$summary" | grep -o '[0-9.]* sentences/s' | head -1 | cut -d' ' -f1)
    if [ -n "$rate" ] && { [ -z "${best[$p]:-}" ] || awk -v a="$rate" -v b="${best[$p]}" 'BEGIN { exit !(a > b) }'; }; then
      best[$p]=$rate
    fi
  done
done
step "best sentences/s of $rounds round(s), $subset, beam 5, batch $batch"
for p in "${precisions[@]}"; do
  if [ -n "${best[$p]:-}" ] && [ -n "${best[fp32]:-}" ]; then
    awk -v p="$p" -v r="${best[$p]}" -v f="${best[fp32]}" 'BEGIN { printf "%s %.2f sentences/s, %.2fx fp32\n", p, r, r / f }'
  else
    echo "$p: no figure"
  fi
done
