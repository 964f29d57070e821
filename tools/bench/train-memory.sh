#!/usr/bin/env bash
# Memory of training (issue 20, item 6): csan against the plain PyTorch loop on the same
# batches, and csan-train's resident set after every epoch of a longer run.
#   tools/bench/train-memory.sh [--precision fp32|bf16] small|base DATA_BIN [EPOCHS] [UPDATES]
# 1. Same batches: bench-train runs UPDATES updates (default 60) and dumps them;
#    pytorch-reference-train.py trains on them (autocast bf16 with --precision bf16).
#    Both under /usr/bin/time -v: peak RSS side by side.
# 2. A run: csan-train for EPOCHS epochs (default 20) on DATA_BIN with validation and
#    checkpoints as a user runs it; peak RSS by /usr/bin/time -v and the RSS at the end of
#    every epoch (metrics.jsonl's rss_mib, the last train record of each epoch).
# ALLOCATOR=jemalloc|tcmalloc|glibc preloads that allocator into every csan process
# instead of the one the executables link (for comparisons); CSAN_BUILD_DIR as elsewhere.
# Needs /usr/bin/time (Debian's time) and, for part 1, python3-torch.
source "$(dirname "$0")/../script-help.sh"
help_if_asked "$0" "$@"
set -euo pipefail
precision=fp32
if [ "${1:-}" = --precision ]; then
  precision=${2:?--precision needs fp32 or bf16}
  shift 2
fi
config=${1:?usage: train-memory.sh [--precision fp32|bf16] small|base DATA_BIN [EPOCHS] [UPDATES]}
data=${2:?data directory}
epochs=${3:-20}
updates=${4:-60}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${CSAN_BUILD_DIR:-$root/build}
case $config in
  small) recipe=bench-small.yaml; model=(--embed-dim 256 --ffn-dim 1024 --heads 4 --layers 3) ;;
  base) recipe=transformer-base.yaml; model=(--embed-dim 512 --ffn-dim 2048 --heads 8 --layers 6) ;;
  *) echo "train-memory.sh: unknown config '$config' (small or base)" >&2; exit 2 ;;
esac
case $precision in fp32 | bf16) ;; *) echo "train-memory.sh: unknown precision '$precision'" >&2; exit 2 ;; esac
[ -x /usr/bin/time ] || { echo "train-memory.sh: needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
preload=()
case ${ALLOCATOR:-} in
  "") ;;
  jemalloc) preload=(env LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2) ;;
  tcmalloc) preload=(env LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4) ;;
  glibc) preload=(env CSAN_MALLOC=glibc) ;;
  *) echo "train-memory.sh: unknown ALLOCATOR '$ALLOCATOR' (jemalloc, tcmalloc, glibc)" >&2; exit 2 ;;
esac
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
langs=(--source-lang en --target-lang de)
peak_mib() { awk '/Maximum resident set size/ {printf "%.0f", $NF / 1024}' "$1"; }

echo "== $config $precision ${ALLOCATOR:+(allocator $ALLOCATOR) }on the same $updates batches"
/usr/bin/time -v -o "$work/csan.time" "${preload[@]}" "$build/tools/bench/bench-train" --data "$data" "${langs[@]}" \
  --recipe "$root/recipes/$recipe" --warmup 0 --updates "$updates" --precision "$precision" \
  --dump-batches "$work/batches" | grep "target tokens/s"
python=${CSAN_PYTHON:-/usr/bin/python3}  # the PyTorch to compare with (CSAN_PYTHON: another one)
if "$python" -c 'import torch' 2>/dev/null; then
  /usr/bin/time -v -o "$work/torch.time" "$python" "$here/pytorch-reference-train.py" --data "$data" \
    "${langs[@]}" --batches "$work/batches" "${model[@]}" --precision "$precision"
  echo "peak RSS: csan $(peak_mib "$work/csan.time") MiB, pytorch $(peak_mib "$work/torch.time") MiB"
else
  echo "peak RSS: csan $(peak_mib "$work/csan.time") MiB (python3-torch absent: no PyTorch figure)"
fi

[ "$epochs" -gt 0 ] || exit 0
echo "== csan-train $config $precision, $epochs epochs"
/usr/bin/time -v -o "$work/train.time" "${preload[@]}" "$build/cli/csan-train" "$root/recipes/$recipe" \
  --data "$data" "${langs[@]}" --save-dir "$work/run" --precision "$precision" --max-epoch "$epochs" \
  --log-interval 5 --set checkpoint.no_epoch_checkpoints=true > "$work/train.log" 2>&1 ||
  { tail -5 "$work/train.log" >&2; exit 1; }
python3 - "$work/run/metrics.jsonl" <<'PY'
import json, sys
last = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("kind") == "train" and "rss_mib" in r:
        last[r["epoch"]] = r
print("epoch  update  RSS MiB  peak MiB  wps")
for e in sorted(last):
    r = last[e]
    print(f"{e:5d} {r['update']:7d} {r['rss_mib']:8.0f} {r['peak_rss_mib']:9.0f} {r['wps']:6.0f}")
PY
echo "peak RSS of the run: $(peak_mib "$work/train.time") MiB; wall $(awk -F': ' '/Elapsed/ {print $2}' "$work/train.time")"
