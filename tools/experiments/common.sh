# What the comparison scripts of tools/experiments share (sourced, not run): their
# options, the data (the toy corpus or a raw corpus, preprocessed with a joint
# SentencePiece vocabulary), training and translating each system, and the report
# (csan-score with paired bootstrap against the first system, results.md, curves).
# A script sets `experiment` (its name, for messages), then calls
#   experiment_options "$@"            --quick --out --build --data --seed, -h (the script's header)
#   toy_corpus | raw_corpus            sets src, tgt and the train/valid/test prefixes
#   preprocess SPM_VOCAB               -> data-bin (kept when there)
#   train_and_translate NAME DIR ARGS  csan-train RECIPE ARGS (resumes), then valid and test
#                                      translated with DIR/checkpoint_best.pt -> hyp/SPLIT/NAME
#   report TITLE CURVES_TITLE SETTING NAME=DIR ...
# Only the executables' command lines are used.

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
read -r load_at_start _ < /proc/loadavg  # times per update mean little on a busy machine
die() { echo "$experiment: error: $*" >&2; exit 1; }
step() { echo "$experiment: $*" >&2; }

# Sets quick, out, build, data, seed, bin and python; creates OUT and enters it.
experiment_options() {
  quick=0 out="" build=${CSAN_BUILD_DIR:-$root/build} data=$root/../shared/data/multi30k seed=1
  while (($#)); do
    case "$1" in
      --quick) quick=1 ;;
      --out|--build|--data|--seed)
        (($# >= 2)) || die "$1 needs a value"
        case "$1" in --out) out=$2 ;; --build) build=$2 ;; --data) data=$2 ;; --seed) seed=$2 ;; esac
        shift ;;
      -h|--help) awk 'NR == 1 { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "$0"; exit 0 ;;
      *) die "unknown option '$1' (see --help)" ;;
    esac
    shift
  done
  [[ $seed =~ ^[0-9]+$ ]] || die "--seed '$seed': not a non-negative integer"
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
# 100 valid, 100 test, seed 1 (small enough that ctest runs each --quick in well under a minute).
toy_corpus() {
  src=src tgt=tgt
  local raw=$out/raw
  train_prefix=$raw/train valid_prefix=$raw/valid test_prefix=$raw/test
  if [ ! -s "$raw/test.$tgt" ]; then
    step "toy corpus -> $raw"
    "$build/tools/csan-toy-corpus" --out-dir "$raw" --train 1000 --valid 100 --test 100 --seed 1 --max-words 10 \
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
  if [ ! -s data-bin/preprocess.json ]; then
    step "preprocessing -> $out/data-bin"
    "$bin/csan-preprocess" --source-lang $src --target-lang $tgt --trainpref "$train_prefix" \
      --validpref "$valid_prefix" --testpref "$test_prefix" --destdir data-bin --joined-dictionary \
      --spm-vocab-size "$1" --workers 2 2> preprocess.log || { tail -3 preprocess.log >&2; die "csan-preprocess failed (log: $out/preprocess.log)"; }
  fi
}

# train_and_translate NAME DIR [csan-train options]: trains `recipe` with `seed` and
# --eval-bleu, then translates valid and test (beam 5) with the lowest-loss checkpoint.
train_and_translate() {
  local name=$1 dir=$2 split
  shift 2
  mkdir -p "$dir"
  step "training $name -> $out/$dir (log: $dir/train.log)"
  # Appended, not replaced: a resumed run's log keeps the first part's lines.
  "$bin/csan-train" "$recipe" --data data-bin --save-dir "$dir" --seed "$seed" --eval-bleu "$@" >> "$dir/train.log" 2>&1 ||
    { tail -3 "$dir/train.log" >&2; die "csan-train failed for $name (log: $out/$dir/train.log)"; }
  for split in valid test; do
    mkdir -p "hyp/$split"
    if [ ! -s "hyp/$split/$name" ] || [ "$dir/checkpoint_best.pt" -nt "hyp/$split/$name" ]; then
      step "translating $split with $name"
      "$bin/csan-generate" --path "$dir/checkpoint_best.pt" --data data-bin --gen-subset $split --beam 5 \
        --output-format plain > "hyp/$split/$name.tmp" 2> "hyp/$split/$name.log" ||
        { tail -3 "hyp/$split/$name.log" >&2; die "csan-generate failed for $name on $split"; }
      mv "hyp/$split/$name.tmp" "hyp/$split/$name"
    fi
  done
}

# report TITLE CURVES_TITLE SETTING NAME=DIR...: BLEU and chrF2 of every system on valid
# and test with csan-score's paired bootstrap against the first, OUT/results.md (the
# setting completed with the commit and the machine), and with matplotlib OUT/curves.png
# and OUT/test-significance.png.
report() {
  local title=$1 curves_title=$2 setting=$3 split system
  shift 3
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

  local commit cpu plots
  commit=$(git -C "$root" describe --always --dirty 2>/dev/null || echo unknown)
  cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
  setting="$setting Commit $commit; $(nproc) CPU cores (${cpu:-unknown CPU}), load average $load_at_start when the script started; $(date -u +%Y-%m-%d)."
  "$python" "$root/tools/experiments/results_table.py" --output results.md --title "$title" --setting "$setting" \
    --valid-scores valid-scores.json --test-scores test-scores.json "$@"

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
