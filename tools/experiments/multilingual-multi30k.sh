#!/usr/bin/env bash
# One multilingual model for En->De and De->En against two single-direction models with the
# same recipe, in one command. Preprocesses the corpus three times (the two directions into
# one directory with the language tokens __en__/__de__ and one joint SentencePiece model;
# each direction alone with its own joint model, as csan-preprocess --joined-dictionary
# does), trains the three models with the same recipe, seed and number of updates (so the
# multilingual model sees each direction about half as often), translates each direction's
# test set (beam `beam`, 5) with each model's lowest-loss checkpoint, scores them with
# csan-score (BLEU and chrF2) and writes OUT/results.md.
#
#   tools/experiments/multilingual-multi30k.sh [--quick] [--out DIR] [--build DIR] [--data DIR] [--seed N]
#          [--precision P] [--lang-tok-style encoder|decoder] [--max-update N] [--recipe FILE]
#
# full     Multi30k (--data, default ../shared/data/multi30k: raw train, val, test2016 .en/.de),
#          recipes/multi30k-small.yaml (d 256, FFN 1024, 4 heads, 3 + 3 layers, joint 8k
#          SentencePiece, 4,000 updates): three runs of several hours each on 2 CPU cores.
# --quick  the built-in toy corpus (1,000 pairs; its two languages stand for en and de),
#          recipes/tiny-transformer.yaml, 80 updates: about a minute; checks the pipeline,
#          not the comparison.
# --lang-tok-style  where the multilingual model's target-language token goes (default
#          encoder: before the source).
# --max-update N  stop each of the three trainings after N updates instead of the recipe's
#          (a shorter comparison when hours are not available; results.md says N).
# --recipe FILE  train the three models with FILE instead of multi30k-small.yaml (e.g.
#          recipes/tiny-transformer.yaml: a smaller model, minutes instead of hours).
# Rerunning continues: data and finished steps are kept, training resumes from
# checkpoint_last.pt. Only the executables' command lines are used.
set -euo pipefail
experiment=multilingual-multi30k
experiment_flags=()
source "$(dirname "$0")/common.sh"
lang_tok_style=encoder max_update="" recipe_given=""
args=()
while (($#)); do
  case "$1" in
    --lang-tok-style)
      (($# >= 2)) || die "--lang-tok-style needs a value"
      [[ $2 == encoder || $2 == decoder ]] || die "--lang-tok-style '$2': expected encoder or decoder"
      lang_tok_style=$2
      shift ;;
    --max-update)
      (($# >= 2)) || die "--max-update needs a value"
      [[ $2 =~ ^[1-9][0-9]{0,8}$ ]] || die "--max-update '$2': expected a positive integer"
      max_update=$2
      shift ;;
    --recipe)
      (($# >= 2)) || die "--recipe needs a value"
      [ -f "$2" ] && [ -r "$2" ] || die "--recipe '$2': no such readable file"
      recipe_given=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
      shift ;;
    *) args+=("$1") ;;
  esac
  shift
done
experiment_options ${args[@]+"${args[@]}"}
((${#seeds[@]} == 1)) || die "--seeds: this script trains one seed (--seed N)"
((report_only == 0)) && [ -z "$only" ] || die "--report-only and --systems are not offered by this script"

if ((quick)); then
  toy_corpus
  recipe=$root/recipes/tiny-transformer.yaml spm_vocab=300
  train_args=(--max-update 80 --log-interval 10 --set dataset.max_tokens=1024 --set lr_scheduler.warmup_updates=20
              --set checkpoint.no_epoch_checkpoints=true --set dataset.validate_interval_updates=40)
  setting="Quick check (--quick): the built-in toy corpus (1,000 training pairs; src stands for the first language, tgt for the second), recipes/tiny-transformer.yaml, 80 updates of 1,024 tokens, seed $seed. Numbers say nothing about the comparison."
else
  multi30k_corpus
  recipe=$root/recipes/multi30k-small.yaml spm_vocab=8000
  train_args=()
  setting="Multi30k (29,000 / 1,014 / 1,000 pairs: train / val / test2016), recipes/multi30k-small.yaml (d 256, FFN 1024, 4 heads, 3 + 3 layers, 4,000 updates), joint 8k SentencePiece vocabulary per data directory, seed $seed, beam $beam, checkpoint with the lowest validation loss (the multilingual model: the lowest overall loss)."
fi
if [ -n "$max_update" ]; then
  train_args+=(--max-update "$max_update")
  setting="$setting Every training stopped after $max_update updates (--max-update), not the recipe's."
fi
if [ -n "$recipe_given" ]; then
  setting="$setting The three models trained with ${recipe_given#$root/} (--recipe) instead."
  recipe=$recipe_given
fi
a=$src b=$tgt

# The pair layout of csan-preprocess --task multilingual_translation, as links to the raw files
# (the reverse direction reads the same files).
mkdir -p raw-pairs
for split in train valid test; do
  prefix_var=${split}_prefix
  for lang in $a $b; do ln -sf "${!prefix_var}.$lang" "raw-pairs/$split.$a-$b.$lang"; done
done

prep() {  # DESTDIR ARGS...: csan-preprocess into DESTDIR unless it is there
  local dest=$1
  shift
  [ -s "$dest/preprocess.json" ] && return 0
  step "preprocessing -> $out/$dest"
  "$bin/csan-preprocess" "$@" --trainpref raw-pairs/train --validpref raw-pairs/valid --testpref raw-pairs/test \
    --destdir "$dest" --spm-vocab-size $spm_vocab --workers 2 2> "$dest.log" ||
    { tail -3 "$dest.log" >&2; die "csan-preprocess failed (log: $out/$dest.log)"; }
}
# Single directions read raw-pairs/SPLIT.a-b.LANG too: their prefix is SPLIT.a-b.
prep_single() {  # DESTDIR SRC TGT
  local dest=$1 s=$2 t=$3
  [ -s "$dest/preprocess.json" ] && return 0
  step "preprocessing -> $out/$dest"
  "$bin/csan-preprocess" --source-lang $s --target-lang $t --joined-dictionary --trainpref raw-pairs/train.$a-$b \
    --validpref raw-pairs/valid.$a-$b --testpref raw-pairs/test.$a-$b --destdir "$dest" --spm-vocab-size $spm_vocab \
    --workers 2 2> "$dest.log" || { tail -3 "$dest.log" >&2; die "csan-preprocess failed (log: $out/$dest.log)"; }
}
prep data-multi --task multilingual_translation --lang-pairs $a-$b,$b-$a
prep_single data-$a-$b $a $b
prep_single data-$b-$a $b $a

train() {  # DIR DATA ARGS...
  local dir=$1 data=$2
  shift 2
  mkdir -p "$dir"
  step "training $dir (log: $dir/train.log)"
  "$bin/csan-train" "$recipe" --data "$data" --save-dir "$dir" --seed "$seed" ${precision:+--precision "$precision"} \
    ${threads[@]+"${threads[@]}"} ${train_args[@]+"${train_args[@]}"} "$@" >> "$dir/train.log" 2>&1 ||
    { tail -3 "$dir/train.log" >&2; die "csan-train failed for $dir (log: $out/$dir/train.log)"; }
}
train multilingual data-multi --set task.name=multilingual_translation --lang-pairs $a-$b,$b-$a \
  --lang-tok-style $lang_tok_style
train single-$a-$b data-$a-$b
train single-$b-$a data-$b-$a

translate() {  # NAME DIR DATA SRC TGT [ARGS...]: the test set of SRC-TGT -> hyp/NAME
  local name=$1 dir=$2 data=$3 s=$4 t=$5
  shift 5
  mkdir -p hyp
  step "translating test $s-$t with $dir"
  "$bin/csan-generate" --path "$dir/checkpoint_best.pt" --data "$data" --gen-subset test --source-lang $s \
    --target-lang $t --beam "$beam" ${threads[@]+"${threads[@]}"} --output-format plain "$@" > "hyp/$name" \
    2> "hyp/$name.log" || { tail -3 "hyp/$name.log" >&2; die "csan-generate failed for $name"; }
}
translate multilingual.$a-$b multilingual data-multi $a $b
translate multilingual.$b-$a multilingual data-multi $b $a
translate single.$a-$b single-$a-$b data-$a-$b $a $b
translate single.$b-$a single-$b-$a data-$b-$a $b $a

score() {  # HYP REF METRIC: the corpus score
  "$bin/csan-score" "$2" -i "$1" -m "$3" -b | tr -d '\n'
}
{
  echo "# One multilingual model vs two single-direction models"
  echo
  echo "$setting Multilingual model: language tokens on the $lang_tok_style side, sampling temperature 1."
  echo
  echo "| direction | model | BLEU | chrF2 |"
  echo "|---|---|---|---|"
  for dir in "$a-$b" "$b-$a"; do
    t=${dir#*-}
    ref=raw-pairs/test.$a-$b.$t
    for model in multilingual single; do
      echo "| $dir | $model | $(score hyp/$model.$dir "$ref" bleu) | $(score hyp/$model.$dir "$ref" chrf) |"
    done
  done
  echo
  machine_line multilingual/train.log
} > results.md
cat results.md
step "wrote $out/results.md"
