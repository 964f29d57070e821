#!/usr/bin/env bash
# csan against CTranslate2 on the same Transformer, CPU decoding (issue 37, part 5): speed at
# equal output and peak RSS, fp32 and int8, side by side in one run.
#   tools/bench/ctranslate2/run.sh CHECKPOINT DATA TEST WORK_DIR
# CHECKPOINT: a csan Transformer (fp32, any format). DATA: its csan-preprocess folder (the
# binarized test split is what bench-generate decodes). TEST: prefix of the raw test set
# (TEST.<src>, TEST.<tgt>, the same sentences). CTranslate2 comes from build.sh's folder
# (CT2_PREFIX, default build-ct2/), the model conversion needs FAIRSEQ_SRC (a fairseq source
# tree: see convert.py). Other settings: ROUNDS (3), REPEATS (2), THREADS (2), CT2_BACKEND,
# PHASES ("prep check rounds rss summary"), RSS_RUNS (3), CSAN_BUILD_DIR as elsewhere.
# Phases:
#   prep    weights-only fp32 checkpoint and its int8 inference checkpoint (csan), CTranslate2
#           float32 and int8 models converted from csan-export's fairseq folder (convert.py)
#   check   first 200 sentences, fp32: csan-generate against CTranslate2 (identical lines)
#   rounds  ROUNDS alternating rounds over the whole test set, beam 5, batch 64, THREADS
#           threads: csan bench-generate fp32/int8 (its default: one batch per thread, and
#           --parallel-batches 1: one batch on all threads) and CTranslate2 float32/int8 with
#           intra_threads=THREADS (one batch on all threads) and inter_threads=THREADS (one
#           batch per thread); each timing is the best of REPEATS decodings of the file
#   rss     the whole file again, under /usr/bin/time -v: csan-generate (process start,
#           loading, translating) and CTranslate2's Python process (the same), their peak RSS
#           in both matching layouts (one batch per thread: csan's default and inter_threads;
#           one batch on all threads: --parallel-batches 1 and intra_threads), RSS_RUNS (3)
#           runs each, and translations; plus each side's process floor
#   summary WORK_DIR/summary.md: medians over rounds, BLEU, identical lines, peak RSS, ratios
#           against the issue's goals
# Run it on a quiet machine: it alternates the engines so that drift hits both, but a build
# beside it still decides the figures.
source "$(dirname "$0")/../../script-help.sh"
help_if_asked "$0" "$@"
set -euo pipefail
usage="usage: run.sh CHECKPOINT DATA TEST WORK_DIR (see --help)"
checkpoint=${1:?$usage}; data=${2:?$usage}; test=${3:?$usage}; work=${4:?$usage}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
build=${CSAN_BUILD_DIR:-$root/build}
prefix=${CT2_PREFIX:-$root/build-ct2}
rounds=${ROUNDS:-3}; repeats=${REPEATS:-2}; threads=${THREADS:-2}
phases=${PHASES:-prep check rounds rss summary}
# CTranslate2 uses MKL only on Intel CPUs unless told (src/cpu/backend.cc); its wheels add
# oneDNN for the others. CT2_BACKEND: "auto" (the default where build.sh built oneDNN in:
# CTranslate2 chooses, as its wheels do: MKL on Intel, oneDNN elsewhere) or "mkl" (the default
# otherwise: without oneDNN a CPU not Intel's would have no int8 backend at all; README.md).
backend=${CT2_BACKEND:-$([ -d "$prefix/intel" ] && echo auto || echo mkl)}
case $backend in auto | mkl) ;; *) echo "run.sh: CT2_BACKEND=$backend: expected auto or mkl" >&2; exit 2 ;; esac
[ -x /usr/bin/time ] || { echo "run.sh: needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
[ -r "$checkpoint" ] || { echo "run.sh: $checkpoint: cannot read" >&2; exit 2; }
[ -f "$data/preprocess.json" ] || { echo "run.sh: $data: no preprocess.json (not a csan-preprocess folder)" >&2; exit 2; }
[ -d "$prefix/lib" ] && [ -d "$prefix/src/python" ] ||
  { echo "run.sh: $prefix: no CTranslate2 build (run tools/bench/ctranslate2/build.sh)" >&2; exit 2; }
read -r src tgt < <(/usr/bin/python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); print(p["source_lang"], p["target_lang"])' "$data/preprocess.json")
[ -r "$test.$src" ] && [ -r "$test.$tgt" ] || { echo "run.sh: $test.$src or $test.$tgt: cannot read" >&2; exit 2; }
export LD_LIBRARY_PATH=$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PYTHONPATH=$prefix/src/python${PYTHONPATH:+:$PYTHONPATH}
if [ "$backend" = auto ]; then unset CT2_USE_MKL; else export CT2_USE_MKL=1; fi
py=/usr/bin/python3
mkdir -p "$work/logs" "$work/hyp"
results=$work/results.jsonl
has() { [[ " $phases " == *" $1 "* ]]; }
log() { echo "[$(date +%T)] $*" >&2; }
peak_kib() { awk -F': ' '/Maximum resident/ {print $2}' "$1"; }

if has prep; then
  log prep
  : "${FAIRSEQ_SRC:?FAIRSEQ_SRC=DIR (a fairseq source tree) is needed to convert}"
  "$build/tools/average-checkpoints" --inputs "$checkpoint" --output "$work/model.fp32.pt" > "$work/logs/prep.txt"
  "$build/tools/convert-checkpoint" --input "$work/model.fp32.pt" --output "$work/model.int8.pt" --precision int8 \
    >> "$work/logs/prep.txt" 2>&1
  "$py" "$here/convert.py" --checkpoint "$work/model.fp32.pt" --output-dir "$work/ct2" --fairseq-src "$FAIRSEQ_SRC" \
    --csan-build "$build" --quantization float32 int8 >> "$work/logs/prep.txt" 2>&1
  : > "$results"
fi
# Which GEMM backends CTranslate2 runs with here (its own log of them), for the summary.
CT2_VERBOSE=1 "$py" -c 'import ctranslate2, sys; ctranslate2.Translator(sys.argv[1], device="cpu")' \
  "$work/ct2/float32" 2>&1 | grep -E "CPU:|ISA|MKL|backend" > "$work/logs/ct2-backends.txt" || true

ct2() {  # setting model compute_type intra inter input output
  local setting=$1 model=$2 type=$3 intra=$4 inter=$5 input=$6 output=$7
  /usr/bin/time -v -o "$work/logs/time.ct2.$setting.txt" "$py" "$here/translate.py" --model "$work/ct2/$model" \
    --spm "$work/ct2/spm.model" --input "$input" --output "$output" --compute-type "$type" \
    --intra-threads "$intra" --inter-threads "$inter" --repeats "$repeats" --label "$setting" \
    > "$work/logs/ct2.$setting.txt"
}

if has check; then
  log "check: 200 sentences, fp32"
  head -n 200 "$test.$src" > "$work/check.$src"; head -n 200 "$test.$tgt" > "$work/check.$tgt"
  OMP_NUM_THREADS=$threads "$build/cli/csan-generate" --path "$work/model.fp32.pt" --input "$work/check.$src" \
    --output-format plain > "$work/hyp/check.csan.txt" 2> "$work/logs/check.csan.txt"
  repeats=1 ct2 check float32 float32 "$threads" 1 "$work/check.$src" "$work/hyp/check.ct2.txt"
fi

if has rounds; then
  for ((round = 1; round <= rounds; round++)); do
    log "round $round/$rounds: csan"
    for layout in default pb1; do
      extra=(); [ $layout = pb1 ] && extra=(--parallel-batches 1)
      OMP_NUM_THREADS=$threads "$build/tools/bench/bench-generate" --path "$work/model.fp32.pt" --data "$data" \
        --precision fp32,int8 --repeats "$repeats" "${extra[@]}" > "$work/logs/csan.$layout.r$round.txt" 2>&1
      "$py" "$here/summarize.py" --parse-bench "$work/logs/csan.$layout.r$round.txt" --layout $layout \
        --round "$round" >> "$results"
    done
    log "round $round/$rounds: CTranslate2"
    for precision in fp32:float32 int8:int8; do
      name=${precision%%:*}; type=${precision#*:}
      for layout in "intra $threads 1" "inter 1 $threads"; do
        set -- $layout
        ct2 "$name.$1" "$type" "$type" "$2" "$3" "$test.$src" "$work/hyp/ct2.$name.$1.txt"
        tail -n 1 "$work/logs/ct2.$name.$1.txt" | "$py" -c 'import json,sys
d = json.load(sys.stdin); print(json.dumps({"engine": "ct2", "precision": sys.argv[1], "layout": sys.argv[2],
      "round": int(sys.argv[3]), "sent_per_s": d["best_sent_per_s"], "tgt_tok_per_s": d["best_tgt_tok_per_s"]}))' \
          "$name" "$1" "$round" >> "$results"
      done
    done
  done
fi

if has rss; then
  # Peak RSS in both matching layouts: one batch per thread (csan's default, CTranslate2's
  # inter_threads) and one batch on all threads (--parallel-batches 1, intra_threads). Two
  # batches at once peak differently from run to run (how their steps overlap): RSS_RUNS
  # runs of each, alternating the engines; the first runs' translations are scored.
  log "rss: whole processes, translations for BLEU"
  for ((run = 1; run <= ${RSS_RUNS:-3}; run++)); do
    for precision in fp32:float32 int8:int8; do
      name=${precision%%:*}; type=${precision#*:}
      for pair in "default 0 inter 1 $threads" "pb1 1 intra $threads 1"; do
        set -- $pair
        csan_layout=$1 parallel=$2 ct2_layout=$3 intra=$4 inter=$5
        suffix=$name.$csan_layout.$run; [ "$run.$csan_layout" = 1.default ] && suffix=$name
        OMP_NUM_THREADS=$threads /usr/bin/time -v -o "$work/logs/time.csan.$name.$csan_layout.$run.txt" \
          "$build/cli/csan-generate" --path "$work/model.$name.pt" --input "$test.$src" --output-format plain \
          --parallel-batches "$parallel" > "$work/hyp/csan.$suffix.txt" 2> "$work/logs/gen.csan.$name.$csan_layout.$run.txt"
        echo "{\"engine\": \"csan\", \"precision\": \"$name\", \"layout\": \"$csan_layout\", \"run\": $run, \"rss_kib\": $(peak_kib "$work/logs/time.csan.$name.$csan_layout.$run.txt")}" >> "$results"
        suffix=$name.$ct2_layout.$run; [ "$run.$ct2_layout" = 1.intra ] && suffix=$name
        repeats=1 ct2 "$name.rss.$ct2_layout.$run" "$type" "$type" "$intra" "$inter" "$test.$src" "$work/hyp/ct2.$suffix.txt"
        echo "{\"engine\": \"ct2\", \"precision\": \"$name\", \"layout\": \"$ct2_layout\", \"run\": $run, \"rss_kib\": $(peak_kib "$work/logs/time.ct2.$name.rss.$ct2_layout.$run.txt")}" >> "$results"
      done
    done
  done
  /usr/bin/time -v -o "$work/logs/time.csan.floor.txt" "$build/cli/csan-generate" --help > /dev/null
  /usr/bin/time -v -o "$work/logs/time.ct2.floor.txt" "$py" -c \
    "import sys; sys.modules['torch'] = None; import ctranslate2, sentencepiece"
  for engine in csan ct2; do
    echo "{\"engine\": \"$engine\", \"precision\": \"floor\", \"rss_kib\": $(peak_kib "$work/logs/time.$engine.floor.txt")}" >> "$results"
  done
fi

if has summary; then
  "$py" "$here/summarize.py" --work "$work" --reference "$test.$tgt" --check-reference "$work/check.$tgt" \
    --score "$build/cli/csan-score" --threads "$threads" > "$work/summary.md"
  cat "$work/summary.md"
fi
