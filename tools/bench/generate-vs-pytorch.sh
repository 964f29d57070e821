#!/usr/bin/env bash
# csan-generate's speed against a plain PyTorch eager beam search with cached keys and
# values (tools/bench/pytorch-reference-generate.py) on the same checkpoint and data,
# alternating ROUNDS times so that load from other processes hits both alike; prints
# each pair's ratio. In fp32 both must produce the same target tokens (the script
# checks); in bf16/int8 the two round differently, so token counts may differ a little
# and are reported instead.
#   tools/bench/generate-vs-pytorch.sh [--precision fp32|bf16|int8] [--shortlist FILE] CKPT DATA_BIN [ROUNDS] [BUILD_DIR]
# --precision runs both in that precision (projections converted once; the reference
# the way csan does it, with LibTorch's bf16 GEMM and quantized::linear_dynamic);
# --shortlist gives csan its lexical shortlist (the reference has none: this is the
# ratio a user switching tools would see).
# Needs Debian's python3-torch (the same LibTorch 1.13 and OpenBLAS); 2 threads, as the
# issue measures. The setup (a briefly trained small-config model on Multi30k
# test2016) is in bench-generate.cpp's header.
source "$(dirname "$0")/../script-help.sh"
help_if_asked "$0" "$@"
set -euo pipefail
precision=fp32
shortlist=()
while [[ $# -gt 0 && $1 == --* ]]; do
  case $1 in
    --precision) precision=${2:?--precision needs a value}; shift 2 ;;
    --shortlist) shortlist=(--shortlist "${2:?--shortlist needs a file}"); shift 2 ;;
    *) echo "generate-vs-pytorch.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
ckpt=${1:?checkpoint}
data=${2:?data directory}
rounds=${3:-2}
build=${4:-build}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
python=${CSAN_PYTHON:-/usr/bin/python3}  # the PyTorch to compare with (CSAN_PYTHON: another one)
"$python" -c 'import torch' 2>/dev/null || { echo "generate-vs-pytorch.sh: needs python3-torch (or CSAN_PYTHON: a python with torch)" >&2; exit 2; }
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
weights=$(mktemp)
trap 'rm -f "$weights"' EXIT
"$root/$build/tools/bench/bench-generate" --path "$ckpt" --dump-weights "$weights" > /dev/null
for round in $(seq "$rounds"); do
  csan=$("$root/$build/tools/bench/bench-generate" --path "$ckpt" --data "$data" --precision "$precision" \
    ${shortlist[@]+"${shortlist[@]}"} 2>/dev/null | tail -1)
  torch=$("$python" "$here/pytorch-reference-generate.py" --weights "$weights" --data "$data" \
    --precision "$precision" | tail -1)
  # "  8.25 s  121.2 sentences/s  1458.4 target tokens/s (12033 tokens)"
  # "pytorch eager: 1000 sentences, 12033 target tokens, 19.63 s, 51.0 sentences/s, ..."
  awk -v r="$round" -v c="$csan" -v t="$torch" -v p="$precision${shortlist[1]:+ +shortlist}" 'BEGIN {
    split(c, a, " "); split(t, b, /[ ,]+/);
    csan_rate = a[3]; csan_tokens = a[8]; gsub(/[()]/, "", csan_tokens);
    torch_rate = b[10]; torch_tokens = b[5];
    if (csan_tokens != torch_tokens && p == "fp32") { printf "round %d: target tokens differ (csan %s, pytorch %s)\n", r, csan_tokens, torch_tokens; exit 1 }
    printf "round %d, %s: csan %s, pytorch eager %s sentences/s (%s and %s target tokens): %.2fx\n", r, p, csan_rate, torch_rate, csan_tokens, torch_tokens, csan_rate / torch_rate }'
done
