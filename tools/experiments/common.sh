# What the comparison scripts of tools/experiments share (sourced, not run): their
# options, the data (the toy corpus or a raw corpus, preprocessed with a joint
# SentencePiece vocabulary), training and translating each system, and the report
# (csan-score with paired bootstrap against the first system, results.md, curves).
# A script sets `experiment` (its name, for messages), then calls
#   experiment_options "$@"            --quick --out --build --data --seed --jobs --precision,
#                                      --no-valid-bleu, -h (the script's header)
#   toy_corpus [VALID TEST] | multi30k_corpus   sets src, tgt and the train/valid/test prefixes
#   preprocess SPM_VOCAB               -> data-bin (kept when there)
#   run_system NAME DIR ARGS           csan-train RECIPE ARGS (resumes), then valid and test
#                                      translated (beam `beam`, default 5) with
#                                      DIR/checkpoint_best.pt -> hyp/SPLIT/NAME; with --jobs N,
#                                      up to N systems at once
#   finish_systems                     waits for them; an error when one failed
#   (--systems A,B: only those systems train and translate, and report writes no table;
#   --report-only: nothing trains or translates, the table comes from the translations, logs
#   and run.json already in OUT, which may come from other machines)
#   report TITLE CURVES_TITLE SETTING NAME=DIR ...   (extra results_table.py options: table_args)
# Only the executables' command lines are used.

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
source "$root/tools/script-help.sh"
read -r load_at_start _ < /proc/loadavg  # times per update mean little on a busy machine
die() { echo "$experiment: error: $*" >&2; exit 1; }
step() { echo "$experiment: $*" >&2; }

# Sets quick, out, build, data, seed, jobs, precision, beam, bin and python; creates OUT
# and enters it.
experiment_options() {
  quick=0 out="" build=${CSAN_BUILD_DIR:-$root/build} data=$root/../shared/data/multi30k seed=1 jobs=1 precision=""
  valid_bleu=1 beam=5 table_args=() pids=() pid_names=() only="" all_systems=() report_only=0
  while (($#)); do
    case "$1" in
      --quick) quick=1 ;;
      --report-only) report_only=1 ;;
      --no-valid-bleu) valid_bleu=0 ;;
      --out|--build|--data|--seed|--jobs|--precision|--systems)
        (($# >= 2)) || die "$1 needs a value"
        case "$1" in
          --out) out=$2 ;; --build) build=$2 ;; --data) data=$2 ;; --seed) seed=$2 ;; --jobs) jobs=$2 ;;
          --precision) precision=$2 ;; --systems) only=",$2," ;;
        esac
        shift ;;
      -h|--help) script_help "$0"; exit 0 ;;
      *) die "unknown option '$1' (see --help)" ;;
    esac
    shift
  done
  [[ $seed =~ ^[0-9]+$ ]] || die "--seed '$seed': not a non-negative integer"
  [[ $jobs =~ ^[0-9]+$ ]] && ((jobs >= 1)) || die "--jobs '$jobs': not a positive integer"
  [ -z "$only" ] || ((report_only == 0)) || die "--systems and --report-only: a table needs every system"
  case "$precision" in
    ""|fp32|fp16|amp|bf16) ;;
    *) die "--precision '$precision': not one of fp32, fp16, amp, bf16" ;;
  esac
  # Systems trained at once share the CPUs (on a GPU machine, the GPU; each process then
  # needs a core to launch its kernels).
  threads=()
  if ((jobs > 1)); then
    local cpus
    cpus=$(nproc)
    threads=(--threads $((cpus / jobs > 0 ? cpus / jobs : 1)))
  fi
  # Absolute, because the steps run inside OUT.
  [ -d "$build" ] || die "--build $build: no such directory"
  build=$(cd "$build" && pwd)
  bin=$build/cli
  for exe in "$bin/csan-preprocess" "$bin/csan-train" "$bin/csan-generate" "$bin/csan-score" "$build/tools/csan-toy-corpus"; do
    [ -x "$exe" ] || die "$exe: not built (run tools/build.sh, or give --build DIR)"
  done
  python=/usr/bin/python3
  [ -x "$python" ] || die "$python: not found (Debian's python3 writes the table)"
  if [ -z "$out" ]; then out=$build/experiments/$experiment$( ((quick)) && echo -quick); fi
  mkdir -p "$out" 2>/dev/null || die "--out $out: cannot create directory"
  [ -w "$out" ] || die "--out $out: not writable"
  out=$(cd "$out" && pwd)
  cd "$out"
}

# The built-in toy corpus of the quick checks: 1,000 training pairs of at most 10 words,
# VALID (default 100) valid, TEST (default 100) test, seed 1 (small enough that ctest runs
# each --quick in well under a minute).
toy_corpus() {
  src=src tgt=tgt
  local raw=$out/raw
  train_prefix=$raw/train valid_prefix=$raw/valid test_prefix=$raw/test
  if [ ! -s "$raw/test.$tgt" ]; then
    step "toy corpus -> $raw"
    "$build/tools/csan-toy-corpus" --out-dir "$raw" --train 1000 --valid "${1:-100}" --test "${2:-100}" --seed 1 --max-words 10 \
      2> toy-corpus.log ||
      { tail -1 toy-corpus.log >&2; die "csan-toy-corpus failed (log: $out/toy-corpus.log)"; }
  fi
}

# Multi30k En->De as ../shared/data/multi30k holds it (raw train, val, test2016).
multi30k_corpus() {
  src=en tgt=de
  local f
  for f in train.en train.de val.en val.de test2016.en test2016.de; do
    [ -s "$data/$f" ] || die "--data $data: no $f (expected Multi30k's raw train/val/test2016 .en/.de files)"
  done
  train_prefix=$data/train valid_prefix=$data/val test_prefix=$data/test2016
}

preprocess() {
  ((report_only == 0)) || return 0  # the table needs only the raw references
  if [ ! -s data-bin/preprocess.json ]; then
    step "preprocessing -> $out/data-bin"
    "$bin/csan-preprocess" --source-lang $src --target-lang $tgt --trainpref "$train_prefix" \
      --validpref "$valid_prefix" --testpref "$test_prefix" --destdir data-bin --joined-dictionary \
      --spm-vocab-size "$1" --workers 2 2> preprocess.log || { tail -3 preprocess.log >&2; die "csan-preprocess failed (log: $out/preprocess.log)"; }
  fi
}

# train_and_translate NAME DIR [csan-train options]: trains `recipe` with `seed` and
# --eval-bleu, then translates valid and test (beam `beam`) with the lowest-loss checkpoint.
# --no-valid-bleu drops --eval-bleu: the validations keep their schedule and losses, so the
# same checkpoints are saved and chosen (tested: the same translations), and only
# the curves lose their BLEU; on a GPU that BLEU (beam 5 over the valid set, about 40 times
# a run) takes most of a small run's time (docs/experiments.md).
train_and_translate() {
  local name=$1 dir=$2 split
  shift 2
  mkdir -p "$dir"
  step "training $name -> $out/$dir (log: $dir/train.log)"
  # Appended, not replaced: a resumed run's log keeps the first part's lines.
  local eval_bleu=()
  ((valid_bleu == 0)) || eval_bleu=(--eval-bleu)
  "$bin/csan-train" "$recipe" --data data-bin --save-dir "$dir" --seed "$seed" ${eval_bleu[@]+"${eval_bleu[@]}"} \
    ${precision:+--precision "$precision"} ${threads[@]+"${threads[@]}"} "$@" >> "$dir/train.log" 2>&1 ||
    { tail -3 "$dir/train.log" >&2; die "csan-train failed for $name (log: $out/$dir/train.log)"; }
  for split in valid test; do
    mkdir -p "hyp/$split"
    if [ ! -s "hyp/$split/$name" ] || [ "$dir/checkpoint_best.pt" -nt "hyp/$split/$name" ]; then
      step "translating $split with $name"
      "$bin/csan-generate" --path "$dir/checkpoint_best.pt" --data data-bin --gen-subset $split --beam "$beam" \
        ${threads[@]+"${threads[@]}"} --output-format plain > "hyp/$split/$name.tmp" 2> "hyp/$split/$name.log" ||
        { tail -3 "hyp/$split/$name.log" >&2; die "csan-generate failed for $name on $split"; }
      mv "hyp/$split/$name.tmp" "hyp/$split/$name"
    fi
  done
}

# run_system NAME DIR [csan-train options]: train_and_translate, in the background with
# --jobs N > 1 once fewer than N systems are running.
run_system() {
  all_systems+=("$1")
  [ -z "$only" ] || [[ $only == *",$1,"* ]] || return 0
  if ((report_only)); then
    local f
    for f in "$2/train.log" "$2/metrics.jsonl" "$2/run.json" "hyp/valid/$1" "hyp/test/$1"; do
      [ -s "$f" ] || die "--report-only: $1 has no $out/$f (train it first, or copy its run's outputs there)"
    done
    return 0
  fi
  if ((jobs == 1)); then
    train_and_translate "$@"
    return
  fi
  while (($(jobs -pr | wc -l) >= jobs)); do sleep 1; done
  train_and_translate "$@" &
  pids+=($!) pid_names+=("$1")
}

# finish_systems: waits for the systems run_system started; an error naming those that failed
# (their own errors came first).
finish_systems() {
  local i failed=()
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || failed+=("${pid_names[$i]}")
  done
  pids=() pid_names=()
  ((${#failed[@]} == 0)) || die "${failed[*]}: failed (see the errors above)"
}

# The machine line of a results table: the commit, the CPU, the load when the script
# started, the GPU when csan-train ran on one, the precision and how many systems trained
# at once.
machine_line() {
  local first_log=$1 commit cpu gpu="" line
  commit=$(git -C "$root" describe --always --dirty 2>/dev/null || echo unknown)
  cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
  if grep -q "parameters, on cuda" "$first_log" 2>/dev/null; then
    gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
    gpu="; trained on a GPU (${gpu:-name unknown}) with the CPU cores beside it"
  fi
  line="Commit $commit; $(nproc) CPU cores (${cpu:-unknown CPU})$gpu, load average $load_at_start when the script started; $(date -u +%Y-%m-%d)."
  [ -z "$precision" ] || line="$line Trained with --precision $precision."
  ((jobs == 1)) || line="$line $jobs systems trained at once (--jobs $jobs): times per update are those of a shared machine, not of one system alone."
  echo "$line"
}

# report TITLE CURVES_TITLE SETTING NAME=DIR...: BLEU and chrF2 of every system on valid
# and test with csan-score's paired bootstrap against the first, OUT/results.md (the
# setting completed with the commit and the machine), and with matplotlib OUT/curves.png
# and OUT/test-significance.png.
report() {
  local title=$1 curves_title=$2 setting=$3 split system
  shift 3
  if [ -n "$only" ]; then
    local wanted known=",$(IFS=,; echo "${all_systems[*]}"),"
    for wanted in ${only//,/ }; do
      [[ $known == *",$wanted,"* ]] || die "--systems: no system '$wanted' (the systems: ${known:1:-1})"
    done
    step "trained and translated ${only:1:-1} (--systems); without --systems the table follows"
    return 0
  fi
  local names=() dirs=() labels=()
  for system in "$@"; do
    names+=("${system%%=*}") dirs+=("${system#*=}") labels+=(--label "${system%%=*}")
  done
  local -A refs=([valid]="$valid_prefix.$tgt" [test]="$test_prefix.$tgt")
  for split in valid test; do
    step "scoring $split (BLEU, chrF2, paired bootstrap against ${names[0]})"
    # Run inside hyp/SPLIT so that csan-score names the systems by their names.
    (cd "hyp/$split" && "$bin/csan-score" "${refs[$split]}" -i "${names[@]}" --paired-bs \
       -m bleu chrf -f json > "../../$split-scores.json.tmp" 2> "../../$split-scores.log") ||
      { tail -3 "$split-scores.log" >&2; die "csan-score failed on $split"; }
    mv "$split-scores.json.tmp" "$split-scores.json"
  done

  local plots without_bleu=()
  for system in "$@"; do
    grep -q '^  eval_bleu: false' "${system#*=}/recipe.yaml" 2>/dev/null && without_bleu+=("${system%%=*}")
  done
  ((${#without_bleu[@]} == 0)) ||
    setting="$setting Validated without BLEU during training (--no-valid-bleu; the same checkpoints are chosen, by validation loss): ${without_bleu[*]}, whose curves show losses only."
  if ((report_only)); then
    setting="$setting Table assembled with --report-only from the runs' outputs ($(git -C "$root" describe --always --dirty 2>/dev/null || echo unknown), $(date -u +%Y-%m-%d))."
    table_args+=(--runs)
  else
    setting="$setting $(machine_line "${dirs[0]}/train.log")"
  fi
  "$python" "$root/tools/experiments/results_table.py" --output results.md ${table_args[@]+"${table_args[@]}"} \
    --title "$title" --setting "$setting" --valid-scores valid-scores.json --test-scores test-scores.json "$@"

  if "$python" -c 'import matplotlib' 2>/dev/null; then
    "$python" "$root/tools/plot-curves" "${dirs[@]}" "${labels[@]}" --title "$curves_title" -o curves.png
    "$python" "$root/tools/plot-curves" --paired-bs test-scores.json -o test-significance.png \
      --title "Test set: paired bootstrap against ${names[0]} (* p < 0.05)"
    plots=" curves.png, test-significance.png"
  else
    step "no plots: python3-matplotlib is not installed (tools/install-deps.sh --plots); the table is written"
    plots=""
  fi
  cat results.md
  step "wrote $out/results.md$plots"
}
