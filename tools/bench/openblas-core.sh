#!/usr/bin/env bash
# fp32 speed under each OpenBLAS core choice (docs/fast-cpu-decoding.md, "OpenBLAS's kernels"):
# bench-generate (fp32 decoding of DATA's test split) and bench-train (fp32 updates of
# RECIPE on DATA) with OPENBLAS_CORETYPE set to each of CORES in turn and unset (OpenBLAS's own
# choice for this CPU), alternating, ROUNDS (3) rounds; prints the medians and their ratios to
# the unset run (decoding: sentences/s; training: target tokens/s).
#   tools/bench/openblas-core.sh CHECKPOINT DATA [RECIPE]
# CORES ("Haswell"), ROUNDS (3), UPDATES (10, timed bench-train updates; 0 skips training),
# CSAN_BUILD_DIR as elsewhere. The core OpenBLAS picks itself is printed first.
source "$(dirname "$0")/../script-help.sh"
help_if_asked "$0" "$@"
set -euo pipefail
usage="usage: openblas-core.sh CHECKPOINT DATA [RECIPE] (see --help)"
checkpoint=${1:?$usage}; data=${2:?$usage}
root=$(cd "$(dirname "$0")/../.." && pwd)
recipe=${3:-$root/recipes/bench-small.yaml}
build=${CSAN_BUILD_DIR:-$root/build}
rounds=${ROUNDS:-3}; updates=${UPDATES:-10}; cores=${CORES:-Haswell}
[ -r "$checkpoint" ] || { echo "openblas-core.sh: $checkpoint: cannot read" >&2; exit 2; }
[ -f "$data/preprocess.json" ] || { echo "openblas-core.sh: $data: no preprocess.json (not a csan-preprocess folder)" >&2; exit 2; }
[ -r "$recipe" ] || { echo "openblas-core.sh: $recipe: cannot read" >&2; exit 2; }
read -r src tgt < <(/usr/bin/python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); print(p["source_lang"], p["target_lang"])' "$data/preprocess.json")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "OpenBLAS's own choice: $(env -u OPENBLAS_CORETYPE OPENBLAS_VERBOSE=2 "$build/tools/bench/bench-generate" --help 2>&1 | head -n 1)"
for ((round = 1; round <= rounds; round++)); do
  for core in unset $cores; do
    run=(env -u OPENBLAS_CORETYPE); [ "$core" = unset ] || run=(env OPENBLAS_CORETYPE="$core")
    "${run[@]}" "$build/tools/bench/bench-generate" --path "$checkpoint" --data "$data" --precision fp32 \
      --repeats 1 > "$work/out" 2>&1 || { tail -n 3 "$work/out" >&2; exit 1; }
    echo "$core decode $(sed -n 's/^ *[0-9.]* s *\([0-9.]*\) sentences\/s.*/\1/p' "$work/out")" >> "$work/rates"
    if [ "$updates" -gt 0 ]; then
      "${run[@]}" "$build/tools/bench/bench-train" --data "$data" --source-lang "$src" --target-lang "$tgt" \
        --recipe "$recipe" --warmup 2 --updates "$updates" > "$work/out" 2>&1 || { tail -n 3 "$work/out" >&2; exit 1; }
      echo "$core train $(sed -n 's/.* \([0-9.]*\) target tokens\/s .*loss.*/\1/p' "$work/out" | head -n 1)" >> "$work/rates"
    fi
  done
done
/usr/bin/python3 - "$work/rates" "$rounds" <<'EOF'
import statistics, sys
from collections import defaultdict
rows = defaultdict(list)
for line in open(sys.argv[1]):
    core, what, value = line.split()
    rows[(core, what)].append(float(value))
print(f"medians of {sys.argv[2]} alternating rounds; ratio = rate / the rate with OPENBLAS_CORETYPE unset")
for what, unit in (("decode", "sentences/s"), ("train", "tokens/s")):
    if ("unset", what) not in rows:
        continue
    base = statistics.median(rows[("unset", what)])
    for (core, w), values in rows.items():
        if w != what:
            continue
        m = statistics.median(values)
        speed = m / base
        print(f"  {what:6} OPENBLAS_CORETYPE={core:10} {m:9.1f} {unit:12} ({', '.join(f'{v:.1f}' for v in values)})"
              f"  ratio {speed:.2f}")
EOF
