#!/usr/bin/env bash
# Speed of lexically constrained decoding (csan-generate --constraints): sentences/s of the
# first SENTENCES lines (default 200) of SOURCE unconstrained, then with --constraints and 0,
# 1 and 3 constraints per sentence, in one run (same machine state):
#   tools/bench/constraints.sh CHECKPOINT SOURCE REFERENCE [SENTENCES]
# The constraints are words of the sentence's REFERENCE line (the 2nd; then also the middle
# and the last but one), so that they fit the sentence. Beam 5, OMP_NUM_THREADS (default 2)
# threads; each figure is csan-generate's own summary (translation time, loading excluded).
# Run it on an otherwise idle machine; CSAN_BUILD_DIR as elsewhere.
source "$(dirname "$0")/../script-help.sh"
help_if_asked "$0" "$@"
set -euo pipefail
usage="usage: constraints.sh CHECKPOINT SOURCE REFERENCE [SENTENCES]"
checkpoint=${1:?$usage}
source_file=${2:?$usage}
reference=${3:?$usage}
sentences=${4:-200}
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${CSAN_BUILD_DIR:-$root/build}
for f in "$checkpoint" "$source_file" "$reference"; do
  [ -r "$f" ] || { echo "constraints.sh: $f: cannot read" >&2; exit 2; }
done
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
head -n "$sentences" "$source_file" > "$work/src"
head -n "$sentences" "$reference" > "$work/ref"
# Input lines with 0, 1 and 3 tab-separated constraints (words of the reference).
cp "$work/src" "$work/c0"
paste "$work/src" <(awk '{ print (NF >= 2 ? $2 : $1) }' "$work/ref") > "$work/c1"
paste "$work/src" <(awk '{ m = int((NF + 1) / 2); l = (NF >= 2 ? NF - 1 : NF);
  print (NF >= 2 ? $2 : $1) "\t" $m "\t" $l }' "$work/ref") > "$work/c3"
rate() {  # sentences/s from the summary line; the translations in $work/out
  "$build/cli/csan-generate" --path "$checkpoint" --input "$1" --beam 5 --output-format plain "${@:2}" \
    2> "$work/log" > "$work/out" || { cat "$work/log" >&2; exit 1; }
  sed -n 's/.*sentences (.*) in [0-9.]*s (\([0-9.]*\) sentences\/s.*/\1/p' "$work/log"
}
# How many outputs hold every constraint of their line (as text; constraints are matched as
# token sequences, so a constraint may also be the start of a longer word).
kept() {  # INPUT
  paste "$1" "$work/out" | awk -F'\t' '{ ok = 1; for (i = 2; i < NF; ++i) if (index($NF, $i) == 0) ok = 0; n += ok }
    END { printf "%d of %d outputs hold all their constraints", n, NR }'
}
printf '%-28s %-12s %s\n' "run ($sentences sentences)" "sentences/s" "constraints"
printf '%-28s %-12s\n' "unconstrained" "$(rate "$work/src")"
printf '%-28s %-12s\n' "--constraints, 0 each" "$(rate "$work/c0" --constraints)"
printf '%-28s %-12s %s\n' "--constraints, 1 each" "$(rate "$work/c1" --constraints)" "$(kept "$work/c1")"
printf '%-28s %-12s %s\n' "--constraints, 3 each" "$(rate "$work/c3" --constraints unordered)" "$(kept "$work/c3")"
