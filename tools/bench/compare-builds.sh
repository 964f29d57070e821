#!/usr/bin/env bash
# Speed of two builds side by side: bench-train (recipes/bench-small.yaml, fp32 and bf16) and
# bench-generate (fp32, bf16, int8) of OLD_BUILD and NEW_BUILD take turns, ROUNDS times, on the
# same data and checkpoint, so that load from other processes hits both alike; prints each
# round's figures and, per benchmark, the median of NEW/OLD over the rounds (with its range).
#   tools/bench/compare-builds.sh OLD_BUILD NEW_BUILD DATA_BIN CHECKPOINT [ROUNDS]
# DATA_BIN: the 8k joint Multi30k en-de data (the csan-preprocess command in bench-train.cpp's
# header); CHECKPOINT: a briefly trained bench-small checkpoint (bench-generate.cpp's header).
# A refactoring "must not move" speed: every median within 2% (0.98-1.02).
# COMPARE=generate times only decoding (a change that cannot touch training: more rounds in
# the same time); COMPARE=train only training.
source "$(dirname "$0")/../script-help.sh"
help_if_asked "$0" "$@"
set -euo pipefail
usage="usage: compare-builds.sh OLD_BUILD NEW_BUILD DATA_BIN CHECKPOINT [ROUNDS]"
old=${1:?$usage}
new=${2:?$usage}
data=${3:?$usage}
checkpoint=${4:?$usage}
rounds=${5:-3}
root=$(cd "$(dirname "$0")/../.." && pwd)
for build in "$old" "$new"; do
  for program in bench-train bench-generate; do
    [ -x "$build/tools/bench/$program" ] || { echo "compare-builds.sh: $build/tools/bench/$program: not built" >&2; exit 2; }
  done
done
[ -r "$data/dict.en.txt" ] || { echo "compare-builds.sh: $data: no dict.en.txt (not csan-preprocess output?)" >&2; exit 2; }
[ -r "$checkpoint" ] || { echo "compare-builds.sh: $checkpoint: cannot read" >&2; exit 2; }
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || { echo "compare-builds.sh: ROUNDS '$rounds' is not a positive number" >&2; exit 2; }
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# One figure per benchmark and build: target tokens/s.
train_rate() {  # BUILD PRECISION
  "$1/tools/bench/bench-train" --data "$data" --source-lang en --target-lang de \
    --recipe "$root/recipes/bench-small.yaml" --precision "$2" --warmup 3 --updates 12 |
    awk '/target tokens\/s/ && !/worker/ { for (i = 1; i < NF; i++) if ($(i + 1) == "target") { print $i; exit } }'
}
generate_rates() {  # BUILD -> one line "fp32 bf16 int8" of target tokens/s
  "$1/tools/bench/bench-generate" --path "$checkpoint" --data "$data" --gen-subset test \
    --precision fp32,bf16,int8 --repeats 1 |
    awk '/target tokens\/s/ { for (i = 1; i < NF; i++) if ($(i + 1) == "target") rates = rates " " $i } END { print rates }'
}

compare=${COMPARE:-train,generate}
case $compare in
  train,generate) names=(train-fp32 train-bf16 generate-fp32 generate-bf16 generate-int8) ;;
  train) names=(train-fp32 train-bf16) ;;
  generate) names=(generate-fp32 generate-bf16 generate-int8) ;;
  *) echo "compare-builds.sh: COMPARE '$compare' is not train, generate or train,generate" >&2; exit 2 ;;
esac
for round in $(seq "$rounds"); do
  for side in old new; do
    build=$old
    [ "$side" = new ] && build=$new
    line=""
    [[ $compare == *train* ]] && line="$(train_rate "$build" fp32) $(train_rate "$build" bf16)"
    [[ $compare == *generate* ]] && line="$line$(generate_rates "$build")"
    line=${line# }
    echo "$line" >> "$work/$side"
    echo "round $round $side: $line"
  done
done

echo
printf '%-15s %12s %12s %8s %16s\n' benchmark "old tok/s" "new tok/s" new/old "range (rounds)"
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
for i in "${!names[@]}"; do
  column=$((i + 1))
  old_rates=$(awk -v c=$column '{ print $c }' "$work/old")
  new_rates=$(awk -v c=$column '{ print $c }' "$work/new")
  ratios=$(paste -d' ' <(echo "$old_rates") <(echo "$new_rates") | awk '{ print $2 / $1 }' | sort -g)
  printf '%-15s %12.0f %12.0f %8.3f %7.3f-%.3f\n' "${names[$i]}" "$(echo "$old_rates" | median)" \
    "$(echo "$new_rates" | median)" "$(echo "$ratios" | median)" "$(echo "$ratios" | head -1)" "$(echo "$ratios" | tail -1)"
done
