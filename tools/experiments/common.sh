# What the comparison scripts of tools/experiments share (sourced, not run): their
# options, the data (the toy corpus or a raw corpus, preprocessed with a joint
# SentencePiece vocabulary), training and translating each system, and the report
# (csan-score with paired bootstrap against the first system, results.md, curves).
# A script sets `experiment` (its name, for messages), then calls
#   experiment_options "$@"            --quick --out --build --data --seed --seeds --jobs
#                                      --precision, --no-valid-bleu, -h (the script's header)
#   toy_corpus [VALID TEST] | multi30k_corpus   sets src, tgt and the train/valid/test prefixes
#   preprocess SPM_VOCAB               -> data-bin (kept when there)
#   run_system NAME DIR ARGS           for each seed, csan-train RECIPE ARGS (resumes), then
#                                      valid and test translated (beam `beam`, default 5) with
#                                      the seed's checkpoint_best.pt -> its hyp file; with
#                                      --jobs N, up to N runs at once
#   (--seeds 1,2,3: every system is trained once per seed; seed 1 keeps DIR and
#   hyp/SPLIT/NAME, seed S trains into DIR/seedS and translates into hyp/SPLIT/seedS/NAME)
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

# Where seed S of a system trains (its save dir DIR) and translates to: seed 1 keeps the
# one-seed layout, so that runs made before --seeds stay valid and resumable.
seed_save_dir() { if (($2 == 1)); then echo "$1"; else echo "$1/seed$2"; fi; }
seed_hyp_dir() { if (($1 == 1)); then echo "hyp"; else echo "hyp/seed$1"; fi; }

# parse_seeds LIST: the seeds of --seeds (positive integers, comma-separated, no repeats).
parse_seeds() {
  local list=$1 s
  [[ $list =~ ^[0-9]+(,[0-9]+)*$ ]] || die "--seeds '$list': expected positive integers separated by commas (e.g. 1,2,3)"
  seeds=()
  for s in ${list//,/ }; do
    [[ $s =~ ^0*[1-9][0-9]{0,8}$ ]] || die "--seeds '$list': seed '$s' is not a positive integer below 10^9"
    s=$((10#$s))
    [[ " ${seeds[*]} " != *" $s "* ]] || die "--seeds '$list': seed $s is given twice"
    seeds+=("$s")
  done
}

# resolve_seeds: seeds (and seed, the first; seed_words, as a setting paragraph says them)
# from --seed (seed, seed_given) or --seeds (seeds_list, seeds_given), not both.
resolve_seeds() {
  [[ $seed =~ ^[0-9]+$ ]] || die "--seed '$seed': not a non-negative integer"
  seeds=("$seed")
  if ((seeds_given)); then
    ((seed_given == 0)) || die "--seed and --seeds: give one of them (--seed N is --seeds N)"
    parse_seeds "$seeds_list"
  fi
  seed=${seeds[0]}
  if ((${#seeds[@]} == 1)); then seed_words="seed $seed"; else seed_words="seeds $(IFS=,; echo "${seeds[*]}" | sed 's/,/, /g')"; fi
}

# Sets quick, out, build, data, seeds (seed: the first), jobs, precision, beam, bin and
# python; creates OUT and enters it.
experiment_options() {
  quick=0 out="" build=${CSAN_BUILD_DIR:-$root/build} data=$root/../shared/data/multi30k seed=1 jobs=1 precision=""
  valid_bleu=1 beam=5 table_args=() pids=() pid_names=() only="" all_systems=() report_only=0 seeds_list="" seeds_given=0 seed_given=0
  declare -gA have_seed=()
  while (($#)); do
    case "$1" in
      --quick) quick=1 ;;
      --report-only) report_only=1 ;;
      --no-valid-bleu) valid_bleu=0 ;;
      --out|--build|--data|--seed|--seeds|--jobs|--precision|--systems)
        (($# >= 2)) || die "$1 needs a value"
        case "$1" in
          --out) out=$2 ;; --build) build=$2 ;; --data) data=$2 ;; --seed) seed=$2 seed_given=1 ;; --seeds) seeds_list=$2 seeds_given=1 ;; --jobs) jobs=$2 ;;
          --precision) precision=$2 ;; --systems) only=",$2," ;;
        esac
        shift ;;
      -h|--help) script_help "$0"; exit 0 ;;
      *)
        # A script's own switches: experiment_flags=(--name ...) sets flag_name=1.
        [[ " ${experiment_flags[*]:-} " == *" $1 "* ]] || die "unknown option '$1' (see --help)"
        local flag=${1#--}
        printf -v "flag_${flag//-/_}" 1 ;;
    esac
    shift
  done
  resolve_seeds
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

# train_and_translate NAME DIR SEED [csan-train options]: trains `recipe` with SEED and
# --eval-bleu into the seed's save dir, then translates valid and test (beam `beam`) with its
# lowest-loss checkpoint.
# --no-valid-bleu drops --eval-bleu: the validations keep their schedule and losses, so the
# same checkpoints are saved and chosen (tested: the same translations), and only
# the curves lose their BLEU; on a GPU that BLEU (beam 5 over the valid set, about 40 times
# a run) takes most of a small run's time (docs/experiments.md).
train_and_translate() {
  local name=$1 dir split hyp what=$1
  dir=$(seed_save_dir "$2" "$3")
  hyp=$(seed_hyp_dir "$3")
  local seed=$3
  shift 3
  ((${#seeds[@]} == 1)) || what="$name (seed $seed)"
  mkdir -p "$dir"
  step "training $what -> $out/$dir (log: $dir/train.log)"
  # Appended, not replaced: a resumed run's log keeps the first part's lines.
  local eval_bleu=()
  ((valid_bleu == 0)) || eval_bleu=(--eval-bleu)
  "$bin/csan-train" "$recipe" --data data-bin --save-dir "$dir" --seed "$seed" ${eval_bleu[@]+"${eval_bleu[@]}"} \
    ${precision:+--precision "$precision"} ${threads[@]+"${threads[@]}"} "$@" >> "$dir/train.log" 2>&1 ||
    { tail -3 "$dir/train.log" >&2; die "csan-train failed for $what (log: $out/$dir/train.log)"; }
  for split in valid test; do
    mkdir -p "$hyp/$split"
    local file=$hyp/$split/$name
    if [ ! -s "$file" ] || [ "$dir/checkpoint_best.pt" -nt "$file" ]; then
      step "translating $split with $what"
      "$bin/csan-generate" --path "$dir/checkpoint_best.pt" --data data-bin --gen-subset $split --beam "$beam" \
        ${threads[@]+"${threads[@]}"} --output-format plain > "$file.tmp" 2> "$file.log" ||
        { tail -3 "$file.log" >&2; die "csan-generate failed for $what on $split"; }
      mv "$file.tmp" "$file"
    fi
  done
}

# The outputs --report-only needs of seed SEED of system NAME (save dir DIR).
seed_outputs() {
  local dir hyp
  dir=$(seed_save_dir "$2" "$3")
  hyp=$(seed_hyp_dir "$3")
  echo "$dir/train.log" "$dir/metrics.jsonl" "$dir/run.json" "$hyp/valid/$1" "$hyp/test/$1"
}

# run_system NAME DIR [csan-train options]: train_and_translate for each seed, in the
# background with --jobs N > 1 once fewer than N runs are running.
run_system() {
  local name=$1 dir=$2 s f missing
  shift 2
  all_systems+=("$name")
  [ -z "$only" ] || [[ $only == *",$name,"* ]] || return 0
  if ((report_only)); then
    # With several seeds, a seed a system lacks is left out of its mean (the table says
    # how many seeds each system has); the first system, the baseline, needs every seed.
    local found=0
    for s in "${seeds[@]}"; do
      missing=""
      for f in $(seed_outputs "$name" "$dir" "$s"); do [ -s "$f" ] || { missing=$f; break; }; done
      if [ -z "$missing" ]; then
        have_seed[$name:$s]=1 found=1
      elif ((${#seeds[@]} == 1 || ${#all_systems[@]} == 1)); then
        die "--report-only: $name has no $out/$missing (train it first, or copy its run's outputs there)"
      else
        step "--report-only: $name has no $out/$missing: seed $s of $name is left out"
      fi
    done
    ((found)) || die "--report-only: $name has no outputs of any seed (${seeds[*]}) in $out"
    return 0
  fi
  for s in "${seeds[@]}"; do
    have_seed[$name:$s]=1
    if ((jobs == 1)); then
      train_and_translate "$name" "$dir" "$s" "$@"
      continue
    fi
    while (($(jobs -pr | wc -l) >= jobs)); do sleep 1; done
    train_and_translate "$name" "$dir" "$s" "$@" &
    pids+=($!) pid_names+=("$name$( ((${#seeds[@]} == 1)) || echo " (seed $s)")")
  done
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
  local names=() dirs=() labels=() seed_dirs=() seed_labels=() name dir s
  for system in "$@"; do
    name=${system%%=*} dir=${system#*=}
    names+=("$name") dirs+=("$dir") labels+=(--label "$name")
    for s in "${seeds[@]}"; do
      # plot-curves draws the runs of one label as one system's seeds (faint, and their mean).
      [ -z "${have_seed[$name:$s]:-}" ] || { seed_dirs+=("$(seed_save_dir "$dir" "$s")") seed_labels+=(--label "$name"); }
    done
  done
  local -A refs=([valid]="$valid_prefix.$tgt" [test]="$test_prefix.$tgt")
  local score_args=() test_files=() seed_names hyp suffix width=()
  ((${#seeds[@]} == 1)) || width=(-w 4)
  for s in "${seeds[@]}"; do
    seed_names=()
    for name in "${names[@]}"; do [ -z "${have_seed[$name:$s]:-}" ] || seed_names+=("$name"); done
    hyp=$(seed_hyp_dir "$s") suffix=$( ((s == 1)) || echo ".seed$s")
    for split in valid test; do
      step "scoring $split$( ((${#seeds[@]} == 1)) || echo " (seed $s)") (BLEU, chrF2, paired bootstrap against ${names[0]})"
      # Run inside the hyp folder of SPLIT so that csan-score names the systems by their names.
      # With several seeds, 4 decimals: the means and deviations are of the scores, not of
      # their roundings (one seed keeps csan-score's default and today's table).
      (cd "$hyp/$split" && "$bin/csan-score" "${refs[$split]}" -i "${seed_names[@]}" --paired-bs \
         -m bleu chrf ${width[@]+"${width[@]}"} -f json > "$out/$split-scores$suffix.json.tmp" 2> "$out/$split-scores$suffix.log") ||
        { tail -3 "$split-scores$suffix.log" >&2; die "csan-score failed on $split$suffix"; }
      mv "$split-scores$suffix.json.tmp" "$split-scores$suffix.json"
    done
    score_args+=(--valid-scores "valid-scores$suffix.json" --test-scores "test-scores$suffix.json")
    ((${#test_files[@]})) || test_files=("test-scores$suffix.json")
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
    --title "$title" --setting "$setting" --seeds "$(IFS=,; echo "${seeds[*]}")" \
    "${score_args[@]}" "$@"

  if "$python" -c 'import matplotlib' 2>/dev/null; then
    "$python" "$root/tools/plot-curves" "${seed_dirs[@]}" "${seed_labels[@]}" --title "$curves_title" -o curves.png
    "$python" "$root/tools/plot-curves" --paired-bs "${test_files[0]}" -o test-significance.png \
      --title "Test set: paired bootstrap against ${names[0]} (* p < 0.05)$( ((${#seeds[@]} == 1)) || echo ", seed ${seeds[0]}")"
    plots=" curves.png, test-significance.png"
  else
    step "no plots: python3-matplotlib is not installed (tools/install-deps.sh --plots); the table is written"
    plots=""
  fi
  cat results.md
  step "wrote $out/results.md$plots"
}
