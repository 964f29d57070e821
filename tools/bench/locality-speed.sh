#!/usr/bin/env bash
# Training speed of CSAN Table 1's rows at base size, each relative to transformer_base on
# the same batches (bench-train --arch: the architectures take turns update by update, so
# load from other processes hits them alike), printed next to Table 1's Speed column
# (steps per second on 8 P40 GPUs, relative to the Transformer's 1.28). A method that only
# adds a bias keeps the fused attention kernel: BI_DIRECT, NEIGHBOR and LOCAL_SOFT are
# expected within 5% of the Transformer (ratio >= 0.95).
#   tools/bench/locality-speed.sh DATA_BIN [bench-train options, e.g. --warmup 2 --updates 6
#                                          --set dataset.max_tokens=1024]
# DATA_BIN: the 8k joint Multi30k en-de data (see bench-train.cpp's header). 2 threads;
# CSAN_BUILD_DIR (default build/) holds bench-train. Nine base models take turns
# (docs/architectures.md has run times and figures). The first model of each turn measured a
# few percent slow: for a close call, rerun bench-train with the order reversed.
source "$(dirname "$0")/../script-help.sh"
help_if_asked "$0" "$@"
set -euo pipefail
data=${1:?usage: locality-speed.sh DATA_BIN [bench-train options]}
shift
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${CSAN_BUILD_DIR:-$root/build}
bench=$build/tools/bench/bench-train
[ -x "$bench" ] || { echo "locality-speed.sh: $bench: not built (cmake --build build --target bench-train)" >&2; exit 2; }
[ -s "$data/preprocess.json" ] || { echo "locality-speed.sh: $data: not a csan-preprocess output directory" >&2; exit 2; }
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}

# arch, Table 1 row, Table 1 speed (steps/s) and its ratio to the Transformer's 1.28.
rows="transformer_base Transformer 1.28 1.00
locality_bi_direct_base BI_DIRECT 1.28 1.00
locality_rel_pos_base REL_POS 1.17 0.91
locality_neighbor_base NEIGHBOR 1.22 0.95
locality_local_hard_base LOCAL_HARD 1.22 0.95
locality_local_soft_base LOCAL_SOFT 1.19 0.93
locality_block_base BLOCK 0.95 0.74
locality_cnns_base CNNs 0.74 0.58
csan2d_base CSAN-2D 1.22 0.95"
archs=$(awk '{print $1}' <<< "$rows" | paste -sd,)
read -r load _ < /proc/loadavg
output=$("$bench" --data "$data" --source-lang en --target-lang de --recipe "$root/recipes/transformer-base.yaml" \
         --arch "$archs" "$@")
echo "$output"
echo
echo "Load average at start: $load; $(nproc) cores, OMP_NUM_THREADS=$OMP_NUM_THREADS"
echo "| Row | Arch | Speed vs Transformer here | Table 1 speed (vs Transformer) |"
echo "|---|---|--:|--:|"
while read -r arch row paper ratio; do
  here=$(awk -v a="$arch" '$1 == a && /target tokens\/s/ {sub("x", "", $(NF-2)); print $(NF-2)}' <<< "$output")
  echo "| $row | $arch | ${here:-?} | $paper ($ratio) |"
done <<< "$rows"
