#!/usr/bin/env bash
# csan's training speed against a plain PyTorch eager loop of the same model on the
# same batches (tools/bench/pytorch-reference-train.py), alternating ROUNDS times so
# that load from other processes hits both alike; prints each pair's ratio.
#   tools/bench/train-vs-pytorch.sh [--precision fp32|bf16] small|base DATA_BIN [ROUNDS] [BUILD_DIR]
# --precision bf16: csan-train's bf16 against PyTorch's own CPU mixed precision (the
# reference's forward and loss under torch.autocast('cpu', dtype=torch.bfloat16)).
# DATA_BIN: the issue's 8k joint Multi30k en-de data (see bench-train.cpp's header).
# Needs Debian's python3-torch (the same LibTorch 1.13 and OpenBLAS); 2 threads, as the
# issue measures.
source "$(dirname "$0")/../script-help.sh"
help_if_asked "$0" "$@"
set -euo pipefail
precision=fp32
if [ "${1:-}" = --precision ]; then
  precision=${2:?--precision needs fp32 or bf16}
  shift 2
fi
case $precision in
  fp32 | bf16) ;;
  *) echo "train-vs-pytorch.sh: unknown precision '$precision' (fp32 or bf16)" >&2; exit 2 ;;
esac
config=${1:?small or base}
data=${2:?data directory}
rounds=${3:-2}
build=${4:-build}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
case $config in
  small) recipe=bench-small.yaml; model=(--embed-dim 256 --ffn-dim 1024 --heads 4 --layers 3); steps=() ;;
  base) recipe=transformer-base.yaml; model=(--embed-dim 512 --ffn-dim 2048 --heads 8 --layers 6)
        steps=(--warmup 2 --updates 10) ;;
  *) echo "train-vs-pytorch.sh: unknown config '$config' (small or base)" >&2; exit 2 ;;
esac
python=${CSAN_PYTHON:-/usr/bin/python3}  # the PyTorch to compare with (CSAN_PYTHON: another one)
"$python" -c 'import torch' 2>/dev/null || { echo "train-vs-pytorch.sh: needs python3-torch (or CSAN_PYTHON: a python with torch)" >&2; exit 2; }
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
batches=$(mktemp)
trap 'rm -f "$batches"' EXIT
langs=(--source-lang en --target-lang de)
for round in $(seq "$rounds"); do
  csan=$("$root/$build/tools/bench/bench-train" --data "$data" "${langs[@]}" --recipe "$root/recipes/$recipe" \
         "${steps[@]}" --precision "$precision" --dump-batches "$batches" | awk '/target tokens\/s/ {print $(NF-5)}')
  torch=$("$python" "$here/pytorch-reference-train.py" --data "$data" "${langs[@]}" --batches "$batches" \
          "${model[@]}" --precision "$precision" | awk '{print $(NF-4)}')
  awk -v r="$round" -v c="$csan" -v t="$torch" -v n="$config" \
      -v p="$precision" 'BEGIN {printf "%s %s round %d: csan %s, pytorch eager %s target tokens/s: %.2fx\n", n, p, r, c, t, c / t}'
done
