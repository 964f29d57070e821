#!/usr/bin/env bash
# CSAN Table 2 (Yang et al., NAACL 2019) in one command, on Multi30k En->De: Transformer
# vs 1-D CSAN vs 2-D CSAN with the same recipe and seed. Preprocesses, trains the three,
# translates valid and test (beam 5), scores BLEU and chrF2 with csan-score and its
# paired bootstrap against the Transformer, and writes OUT/results.md (parameters, time
# per update, valid/test BLEU and chrF2, p-values) and, when Debian's python3-matplotlib
# is installed, OUT/curves.png and OUT/test-significance.png (tools/plot-curves).
#
#   tools/experiments/csan-table2.sh [--quick] [--out DIR] [--build DIR] [--data DIR] [--seed N]
#
# full     recipes/multi30k-small.yaml (d 256, 3 + 3 layers, joint 8k SentencePiece),
#          4,000 updates per system; CSAN: window 11 (M+1), 1 or 3 heads (N+1), in encoder
#          layers 0 and 1. About 7 hours on 2 CPU cores (README, "tools/experiments").
# --quick  the built-in toy corpus (3,000 pairs) and the tiny recipe, 200 updates: a few
#          minutes; checks the pipeline, not the paper (ctest runs it).
# Rerunning continues: data and finished steps are kept, training resumes from
# checkpoint_last.pt. Only the executables' command lines are used.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
read -r load_at_start _ < /proc/loadavg  # times per update mean little on a busy machine
die() { echo "csan-table2: error: $*" >&2; exit 1; }
step() { echo "csan-table2: $*" >&2; }

quick=0 out="" build=${CSAN_BUILD_DIR:-$root/build} data=$root/../shared/data/multi30k seed=1
while (($#)); do
  case "$1" in
    --quick) quick=1 ;;
    --out|--build|--data|--seed)
      (($# >= 2)) || die "$1 needs a value"
      case "$1" in --out) out=$2 ;; --build) build=$2 ;; --data) data=$2 ;; --seed) seed=$2 ;; esac
      shift ;;
    -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
  shift
done
[[ $seed =~ ^[0-9]+$ ]] || die "--seed '$seed': not a non-negative integer"
bin=$build/cli
for exe in "$bin/csan-preprocess" "$bin/csan-train" "$bin/csan-generate" "$bin/csan-score" "$build/tools/csan-toy-corpus"; do
  [ -x "$exe" ] || die "$exe: not built (run tools/build.sh, or give --build DIR)"
done
python=/usr/bin/python3
[ -x "$python" ] || die "$python: not found (Debian's python3 writes the table)"
if [ -z "$out" ]; then out=$build/experiments/csan-table2$( ((quick)) && echo -quick); fi
mkdir -p "$out" 2>/dev/null || die "--out $out: cannot create directory"
[ -w "$out" ] || die "--out $out: not writable"
out=$(cd "$out" && pwd)
cd "$out"

# ---- data -------------------------------------------------------------------------
if ((quick)); then
  src=src tgt=tgt corpus="toy corpus (quick check)"
  raw=$out/raw
  train_prefix=$raw/train valid_prefix=$raw/valid test_prefix=$raw/test
  recipe=$root/recipes/tiny-transformer.yaml
  spm_vocab=200
  train_args=(--max-update 200 --log-interval 20 --set dataset.validate_interval_updates=50
              --set task.eval_bleu_beam=2 --set checkpoint.no_epoch_checkpoints=true)
  csan1d=(--arch csan1d_tiny) csan2d=(--arch csan2d_tiny)
  setting="Quick check (--quick): the built-in toy corpus (3,000 training pairs), recipes/tiny-transformer.yaml, 200 updates, seed $seed; csan1d_tiny / csan2d_tiny (window 11, 1 / 3 heads, encoder layer 0). Numbers say nothing about the paper."
  if [ ! -s "$raw/test.$tgt" ]; then
    step "toy corpus -> $raw"
    "$build/tools/csan-toy-corpus" --out-dir "$raw" --train 3000 --valid 200 --test 200 --seed 1 2>/dev/null
  fi
else
  src=en tgt=de corpus="Multi30k En→De"
  for f in train.en train.de val.en val.de test2016.en test2016.de; do
    [ -s "$data/$f" ] || die "--data $data: no $f (expected Multi30k's raw train/val/test2016 .en/.de files)"
  done
  train_prefix=$data/train valid_prefix=$data/val test_prefix=$data/test2016
  recipe=$root/recipes/multi30k-small.yaml
  spm_vocab=8000
  train_args=()
  csan_common=(--arch csan --set model.csan.window=11 --set "model.csan.encoder_layers=[0,1]")
  csan1d=("${csan_common[@]}" --set model.csan.head_window=1) csan2d=("${csan_common[@]}" --set model.csan.head_window=3)
  setting="Multi30k En→De (29,000 / 1,014 / 1,000 pairs: train / val / test2016), joint 8k SentencePiece vocabulary, recipes/multi30k-small.yaml (d 256, FFN 1024, 4 heads, 3 + 3 layers, dropout 0.3, 4,096 tokens per batch, 4,000 updates), seed $seed, beam 5, checkpoint with the lowest validation loss. CSAN: window 11, 1 head (1-D) or 3 heads (2-D), encoder layers 0 and 1; parameter-free."
fi

if [ ! -s data-bin/preprocess.json ]; then
  step "preprocessing -> $out/data-bin"
  "$bin/csan-preprocess" --source-lang $src --target-lang $tgt --trainpref "$train_prefix" \
    --validpref "$valid_prefix" --testpref "$test_prefix" --destdir data-bin --joined-dictionary \
    --spm-vocab-size $spm_vocab --workers 2 2> preprocess.log || { tail -3 preprocess.log >&2; die "csan-preprocess failed (log: $out/preprocess.log)"; }
fi

# ---- train, translate ---------------------------------------------------------------
systems=(Transformer CSAN-1D CSAN-2D)
declare -A dirs=([Transformer]=transformer [CSAN-1D]=csan1d [CSAN-2D]=csan2d)
for name in "${systems[@]}"; do
  dir=${dirs[$name]}
  case $dir in transformer) arch=() ;; csan1d) arch=("${csan1d[@]}") ;; csan2d) arch=("${csan2d[@]}") ;; esac
  mkdir -p "$dir"
  step "training $name -> $out/$dir (log: $dir/train.log)"
  # Appended, not replaced: a resumed run's log keeps the first part's lines.
  "$bin/csan-train" "$recipe" --data data-bin --save-dir "$dir" --seed "$seed" --eval-bleu \
    ${train_args[@]+"${train_args[@]}"} ${arch[@]+"${arch[@]}"} >> "$dir/train.log" 2>&1 ||
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
done

# ---- score, table, plots --------------------------------------------------------------
declare -A refs=([valid]="$valid_prefix.$tgt" [test]="$test_prefix.$tgt")
for split in valid test; do
  step "scoring $split (BLEU, chrF2, paired bootstrap against Transformer)"
  # Run inside hyp/SPLIT so that csan-score names the systems Transformer, CSAN-1D, CSAN-2D.
  (cd "hyp/$split" && "$bin/csan-score" "${refs[$split]}" -i "${systems[@]}" --paired-bs \
     -m bleu chrf -f json > "../../$split-scores.json.tmp" 2> "../../$split-scores.log") ||
    { tail -3 "$split-scores.log" >&2; die "csan-score failed on $split"; }
  mv "$split-scores.json.tmp" "$split-scores.json"
done

commit=$(git -C "$root" describe --always --dirty 2>/dev/null || echo unknown)
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
setting="$setting Commit $commit; $(nproc) CPU cores (${cpu:-unknown CPU}), load average $load_at_start when the script started; $(date -u +%Y-%m-%d)."
"$python" "$root/tools/experiments/results_table.py" --output results.md \
  --title "CSAN Table 2: Transformer vs CSAN-1D vs CSAN-2D, $corpus" --setting "$setting" \
  --valid-scores valid-scores.json --test-scores test-scores.json \
  Transformer=transformer CSAN-1D=csan1d CSAN-2D=csan2d

if "$python" -c 'import matplotlib' 2>/dev/null; then
  "$python" "$root/tools/plot-curves" transformer csan1d csan2d --label Transformer --label CSAN-1D \
    --label CSAN-2D --title "CSAN Table 2, $corpus: Transformer vs CSAN-1D vs CSAN-2D (seed $seed)" -o curves.png
  "$python" "$root/tools/plot-curves" --paired-bs test-scores.json -o test-significance.png \
    --title "Test set: paired bootstrap against Transformer (* p < 0.05)"
  plots=" curves.png, test-significance.png"
else
  step "no plots: python3-matplotlib is not installed (tools/install-deps.sh --plots); the table is written"
  plots=""
fi
cat results.md
step "wrote $out/results.md$plots"
