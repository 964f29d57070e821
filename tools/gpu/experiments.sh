#!/usr/bin/env bash
# The full settings of tools/experiments on the lent GPU machine, all at once: builds csan
# there (tools/gpu/build-env.sh), then runs csan-table2.sh, ccn-vs-transformer.sh and
# locality-table1.sh side by side with --jobs, so that every system of the three (12
# trainings of recipes/multi30k-small.yaml) trains at the same time on the one GPU, each
# script pinned to its own share of the CPU cores (a process needs one to launch its
# kernels). The locality table's Transformer and CSAN-2D are csan-table2's (the same
# command lines): locality-table1.sh first trains its seven methods (--systems), then,
# once all are done, translates and writes its table. CSAN_GPU_RUNS picks comparisons and
# systems, e.g. "ccn:CCN locality:BLOCK,CNNs" (the rest trained elsewhere: the tables are
# then assembled with the scripts' --report-only). Prepared here:
#   tools/gpu/fetch-debs.sh                       .gpu/debs
#   cp -r ../shared/data/multi30k .gpu/multi30k   the raw corpus (references, and the data)
#   cp -r DATA-BIN .gpu/m30k                      optional: a csan-preprocess output of the
#                                                 scripts' own settings, to skip preprocessing
# then there (the device tool, carry [".gpu/debs", ".gpu/multi30k", ".gpu/m30k"]):
#   tools/gpu/experiments.sh [OUT]
# CSAN_GPU_PRECISION (default fp16) is the scripts' --precision. The trainings validate
# without BLEU (the scripts' --no-valid-bleu: the same checkpoints are chosen, by loss; the
# BLEU decoding takes most of a run's time there) unless CSAN_GPU_VALID_BLEU=1.
# CSAN_GPU_DEADLINE (default 540) the seconds after which unfinished trainings are stopped
# (then up to 30 s to save their checkpoints): a second call on the same warm machine
# resumes them (the runs live in build-gpu/experiments). Each experiment's readable outputs (results.md, scores, translations, logs, metrics.jsonl, recipes; no
# checkpoints) are packed into OUT/experiments.tgz, and each finished table is copied to
# OUT/NAME-results.md (OUT default: build-gpu/experiments-out). CSAN_GPU_QUICK=1
# runs the scripts' --quick settings instead (a check of this script, on any machine with
# CSAN_GPU_BUILD_DIR set to a build); CSAN_GPU_WORK moves the runs out of build-gpu.
source "$(dirname "$0")/../script-help.sh"
help_if_asked "$0" "$@"
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$root/build-gpu/experiments-out}
mkdir -p "$out"
start=$(date +%s)
step() { echo "== [$(($(date +%s) - start)) s] $*"; }
deadline=${CSAN_GPU_DEADLINE:-540}
precision=${CSAN_GPU_PRECISION:-fp16}
quick=(); [ "${CSAN_GPU_QUICK:-0}" = 1 ] && quick=(--quick)
valid_bleu=(--no-valid-bleu); [ "${CSAN_GPU_VALID_BLEU:-0}" = 1 ] && valid_bleu=()

# CSAN_GPU_RUNS picks the comparisons, each NAME or NAME:SYSTEM,SYSTEM (the script's
# --systems: those train and translate, and the table is left for --report-only where
# their outputs meet the others').
declare -A scripts=([csan-table2]=csan-table2.sh [ccn]=ccn-vs-transformer.sh [locality]=locality-table1.sh)
declare -A system_count=([csan-table2]=3 [ccn]=2 [locality]=9)
read -r -a wanted <<< "${CSAN_GPU_RUNS:-csan-table2 ccn locality}"
names=()
declare -A subset=()
for entry in "${wanted[@]}"; do
  name=${entry%%:*}
  [ -n "${scripts[$name]:-}" ] ||
    { echo "experiments.sh: error: CSAN_GPU_RUNS: no comparison '$name' (csan-table2, ccn, locality)" >&2; exit 1; }
  names+=("$name")
  [[ $entry == *:* ]] && subset[$name]=${entry#*:}
done

step "machine"
nvidia-smi -L || true
source "$root/tools/gpu/build-env.sh"
if [ ! -x "$bin/csan-train" ] || [ ! -x "$build/tools/csan-toy-corpus" ]; then
  gpu_build csan-train csan-generate csan-preprocess csan-score csan-toy-corpus || { tail -20 "$out/build.log"; exit 1; }
fi

runs=${CSAN_GPU_WORK:-$build/experiments}  # the runs themselves (checkpoints included)
mkdir -p "$runs" && runs=$(cd "$runs" && pwd)
has() { [[ " ${names[*]} " == *" $1 "* ]]; }
# With csan-table2 in the same run, locality's Transformer and CSAN-2D are csan-table2's
# (the same command lines): locality first trains its seven methods, then translates and
# writes its table once all are done.
share_locality=0
if has csan-table2 && has locality && [ -z "${subset[locality]:-}" ] && ((${#quick[@]} == 0)); then
  share_locality=1
  subset[locality]=BI_DIRECT,REL_POS,NEIGHBOR,LOCAL_HARD,LOCAL_SOFT,BLOCK,CNNs
  mkdir -p "$runs/locality"
  ln -sfn ../csan-table2/transformer "$runs/locality/transformer"
  ln -sfn ../csan-table2/csan2d "$runs/locality/csan2d"
fi
jobs_of() { if [ -n "${subset[$1]:-}" ]; then local list=${subset[$1]//[^,]/}; echo $((${#list} + 1)); else echo "${system_count[$1]}"; fi; }

launch() {  # NAME SCRIPT JOBS CORES [script options]
  local name=$1 script=$2 jobs=$3 cores=$4
  shift 4
  mkdir -p "$runs/$name"
  # The scripts keep data-bin when it is there (the same settings: joint 8k SentencePiece).
  [ -s "$runs/$name/data-bin/preprocess.json" ] || [ ! -s "$root/.gpu/m30k/preprocess.json" ] || ((${#quick[@]})) ||
    cp -r "$root/.gpu/m30k" "$runs/$name/data-bin"
  step "$script --jobs $jobs --precision $precision ${valid_bleu[*]} $* on CPUs $cores -> $runs/$name"
  local pin=()
  # (A machine with fewer than 16 cores, as in a CSAN_GPU_QUICK check, shares them all.)
  (($(nproc) >= 16)) && pin=(taskset -c "$cores")
  setsid ${pin[@]+"${pin[@]}"} "$root/tools/experiments/$script" --out "$runs/$name" --build "$build" \
    --data "$root/.gpu/multi30k" --jobs "$jobs" --precision "$precision" ${quick[@]+"${quick[@]}"} \
    ${valid_bleu[@]+"${valid_bleu[@]}"} "$@" >> "$runs/$name.log" 2>&1 &
  pids+=($!)
}
# Each script on its own CPU cores (taskset), in proportion to its trainings.
pids=() total=0 first=0
for name in "${names[@]}"; do total=$((total + $(jobs_of $name))); done
for name in "${names[@]}"; do
  jobs=$(jobs_of "$name")
  count=$((jobs * $(nproc) / total > 0 ? jobs * $(nproc) / total : 1))
  last=$((first + count - 1 < $(nproc) ? first + count - 1 : $(nproc) - 1))
  launch "$name" "${scripts[$name]}" "$jobs" "$first-$last" ${subset[$name]:+--systems "${subset[$name]}"}
  first=$((last + 1 < $(nproc) ? last + 1 : 0))
done

# Progress every minute: the last update each training logged.
progress() {
  local line="" f
  for f in "$runs"/*/*/metrics.jsonl; do
    [ -s "$f" ] || continue
    line="$line $(basename "$(dirname "$(dirname "$f")")")/$(basename "$(dirname "$f")"):$(tail -1 "$f" | grep -o '"update": *[0-9]*' | grep -o '[0-9]*$')"
  done
  step "updates:$line"
}
alive() { local p; for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && return 0; done; return 1; }
last_report=$(date +%s)
while alive && (($(date +%s) - start < deadline)); do
  sleep 5
  if (($(date +%s) - last_report >= 60)); then progress; last_report=$(date +%s); fi
done
if alive; then
  step "deadline ($deadline s): stopping the unfinished runs (a second call resumes them)"
  for p in "${pids[@]}"; do kill -TERM -- -"$p" 2>/dev/null; done
  # csan-train saves checkpoint_last.pt on SIGTERM: a dozen of them at once take seconds
  # (a shorter wait once killed one mid-write, losing its last epoch).
  for _ in $(seq 30); do alive || break; sleep 1; done
  for p in "${pids[@]}"; do kill -KILL -- -"$p" 2>/dev/null; done
fi
progress
failed=0
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || failed=1
done
if ((failed == 0)) && ((share_locality)) && (($(date +%s) - start < deadline)); then
  step "the locality table: its Transformer and CSAN-2D translate, then the table"
  pids=()
  launch locality locality-table1.sh 9 "0-$(($(nproc) - 1))"
  wait "${pids[0]}"
fi
for name in "${names[@]}"; do echo "== $name"; tail -4 "$runs/$name.log"; done

step "pack the readable outputs into $out/experiments.tgz"
# One archive (the device tool brings back only shallow folders), without checkpoints,
# data and the temporary files of a checkpoint interrupted at the deadline.
(cd "$runs" && \
  find -L "${names[@]}" "${names[@]/%/.log}" \
    \( -name data-bin -o -name raw \) -prune -o -type f -size -4M ! -name '*.pt' ! -name '*.pt.tmp*' \
    ! -name '.csan.lock' -print0 2>/dev/null | tar czf "$out/experiments.tgz" --null -T -)
for name in "${names[@]}"; do
  [ -s "$runs/$name/results.md" ] && cp "$runs/$name/results.md" "$out/$name-results.md"
done
ls -la "$out"
step "done"
