#!/usr/bin/env bash
# Issue 20, item 3: what bf16, int8 and int8 + lexical shortlist decoding cost in
# accuracy. Translates a raw test set with one checkpoint in fp32, bf16, int8 and
# int8 + shortlist (beam 5), and scores BLEU and chrF2 with csan-score's paired
# bootstrap against fp32 (1,000 resamples); the table goes to stdout.
#
#   tools/experiments/fast-decoding-accuracy.sh CKPT DATA_BIN SRC REF SRC_LANG TGT_LANG [BUILD_DIR]
#
# DATA_BIN is the checkpoint's binarized data (the shortlist is built from its train
# split by build-shortlist). The issue's setting, Multi30k test2016 with a small
# Transformer (about 7 h of training on 2 CPU cores for recipes/multi30k-small.yaml):
#   D=../shared/data/multi30k
#   build/cli/csan-preprocess -s en -t de --trainpref $D/train --validpref $D/val --testpref $D/test2016 \
#       --joined-dictionary --spm-vocab-size 8000 --destdir /tmp/m30k --workers 1
#   OMP_NUM_THREADS=2 build/cli/csan-train recipes/multi30k-small.yaml --data /tmp/m30k --save-dir /tmp/m30k-small
#   tools/experiments/fast-decoding-accuracy.sh /tmp/m30k-small/checkpoint_best.pt /tmp/m30k \
#       $D/test2016.en $D/test2016.de en de
# Decoding itself takes a few minutes per setting on 2 shared cores.
source "$(dirname "$0")/../script-help.sh"
help_if_asked "$0" "$@"
set -euo pipefail
ckpt=${1:?checkpoint} data=${2:?data directory} src=${3:?raw source} ref=${4:?raw reference}
src_lang=${5:?source language} tgt_lang=${6:?target language}
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${7:-$root/build}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
read -r load _ < /proc/loadavg
"$build/tools/build-shortlist" --data "$data" -s "$src_lang" -t "$tgt_lang" --output "$out/shortlist.txt"
declare -A args=([fp32]="" [bf16]="--precision bf16" [int8]="--precision int8"
                 [int8+shortlist]="--precision int8 --shortlist $out/shortlist.txt")
for setting in fp32 bf16 int8 int8+shortlist; do
  # shellcheck disable=SC2086
  "$build/cli/csan-generate" --path "$ckpt" --input "$src" --output-format plain --beam 5 ${args[$setting]} \
    > "$out/$setting.txt" 2> "$out/$setting.log"
  echo "$setting: $(grep -o 'Translated.*' "$out/$setting.log")" >&2
done
echo "# fp32 vs bf16 vs int8 vs int8+shortlist: $(basename "$ckpt") on $(basename "$src") (load ${load} at start)"
"$build/cli/csan-score" "$ref" -i "$out/fp32.txt" "$out/bf16.txt" "$out/int8.txt" "$out/int8+shortlist.txt" \
  -m bleu chrf --paired-bs -f text
