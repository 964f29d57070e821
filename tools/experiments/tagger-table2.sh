#!/usr/bin/env bash
# Dufter, Schmitt & Schütze (COLING 2020) Table 2 on UD v2.2 treebanks in one command:
# SAN+PE[add] against the other columns (recipes/tagger-*.yaml) with the paper's protocol:
# the convatt vocabulary protocol, RMSprop, 32 chunks of 60 words per batch, early stopping
# on dev accuracy with patience 3, best checkpoint. Tags dev and test with csan-generate,
# scores them with csan-score --task tagging (all / OOV / ambiguous tokens, paired bootstrap
# against PE[add]) and writes OUT/results.md (tools/experiments/tagger_results_table.py: the
# table next to the paper's Table 2d, and the dev accuracy per epoch of every system) and,
# with Debian's python3-matplotlib, OUT/TREEBANK-curves.png (tools/plot-curves, against
# epochs; with several seeds each seed's curve faint and their mean bold).
#
#   tools/experiments/tagger-table2.sh [--quick] [--out DIR] [--build DIR] [--data UD_DIR]
#                                      [--treebanks LinES,GUM,AfriBooms] [--max-epoch N]
#                                      [--systems PE[add],Conv2d] [--seed N | --seeds 1,2,3]
#
# --systems  the columns, from SAN, PE[add], PE[con], P, R, P+R, Temp, Conv1d, Conv2d (the
#          paper's SAN+PE[add]+Conv is Conv1d); default PE[add],Conv2d. PE[add], the baseline
#          of the tests, is always trained and comes first.
# --seeds  every system is trained once per seed (default one seed, 42: --seed 42); the
#          first seed trains in TREEBANK/SYSTEM and tags into hyp/TREEBANK, seed S in
#          TREEBANK/SYSTEM/seedS and hyp/seedS/TREEBANK. The table then gives mean ± sample
#          sd over seeds and a test against PE[add] over both seeds and test sentences.
# full     UD_DIR (default ../shared/data/ud) holds UD_English-LinES, UD_English-GUM and
#          UD_Afrikaans-AfriBooms; every system trains to early stopping (at most 100
#          epochs). A LinES epoch takes about 20-30 wall seconds (training and validation,
#          one thread, an idle machine; bench-tagger gives the CPU seconds): about 15-30
#          minutes per system, treebank and seed on 2 cores. The default table (2 systems,
#          3 treebanks, 1 seed) takes 2-3 hours; all nine columns with 3 seeds on LinES
#          about 7-13 hours, and PE[add] and Conv2d with 3 seeds on GUM and AfriBooms
#          another 3-6 hours.
# --quick  a synthetic treebank (tools/csan-toy-treebank: 300 / 60 / 60 sentences), tiny
#          dimensions, 3 epochs: about 10-15 seconds per system and seed; checks the
#          pipeline, not the paper (ctest runs it).
# Rerunning continues: data and finished steps are kept, training resumes from
# checkpoint_last.pt (a save directory trained with another seed is an error). Only the
# executables' command lines are used.
set -euo pipefail

experiment=tagger-table2
# root, die, step, resolve_seeds (--seed/--seeds' validation) and load_at_start: the comparison
# scripts' (this script takes its own options: treebanks, not a corpus).
source "$(dirname "$0")/common.sh"

# The columns of the paper's Table 2 and their recipes (recipes/tagger-RECIPE.yaml).
all_systems=(SAN "PE[add]" "PE[con]" P R P+R Temp Conv1d Conv2d)
declare -A recipe_of=([SAN]=san ["PE[add]"]=pe-add ["PE[con]"]=pe-con [P]=p [R]=r [P+R]=p-r [Temp]=temp
                      [Conv1d]=conv [Conv2d]=conv2d)

quick=0 out="" build=${CSAN_BUILD_DIR:-$root/build} data=$root/../shared/data/ud seed=42 max_epoch=""
treebanks=LinES,GUM,AfriBooms systems_list="PE[add],Conv2d" seeds_list="" seeds_given=0 seed_given=0
while (($#)); do
  case "$1" in
    --quick) quick=1 ;;
    --out|--build|--data|--seed|--seeds|--systems|--treebanks|--max-epoch)
      (($# >= 2)) || die "$1 needs a value"
      case "$1" in
        --out) out=$2 ;; --build) build=$2 ;; --data) data=$2 ;; --seed) seed=$2 seed_given=1 ;;
        --seeds) seeds_list=$2 seeds_given=1 ;; --systems) systems_list=$2 ;;
        --treebanks) treebanks=$2 ;; --max-epoch) max_epoch=$2 ;;
      esac
      shift ;;
    -h|--help) script_help "$0"; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
  shift
done
resolve_seeds
# The systems, PE[add] first: the baseline of csan-score's paired bootstrap and of the table's tests.
systems=("PE[add]")
[[ $systems_list =~ ^[^,]+(,[^,]+)*$ ]] || die "--systems '$systems_list': expected names separated by commas (e.g. PE[add],Conv2d)"
IFS=, read -r -a wanted <<< "$systems_list"
declare -A given=()
for name in "${wanted[@]}"; do
  [ -n "${recipe_of[$name]+x}" ] || die "--systems: no system '$name' (the systems: $(IFS=,; echo "${all_systems[*]}"))"
  [ -z "${given[$name]+x}" ] || die "--systems '$systems_list': '$name' is given twice"
  given[$name]=1
  [ "$name" = "PE[add]" ] || systems+=("$name")
done
[[ -z $max_epoch || $max_epoch =~ ^[1-9][0-9]*$ ]] || die "--max-epoch '$max_epoch': not a positive integer"
bin=$build/cli
for exe in "$bin/csan-preprocess" "$bin/csan-train" "$bin/csan-generate" "$bin/csan-score" "$build/tools/csan-toy-treebank"; do
  [ -x "$exe" ] || die "$exe: not built (run tools/build.sh, or give --build DIR)"
done
python=/usr/bin/python3
[ -x "$python" ] || die "$python: not found (Debian's python3 writes the table)"

# Treebank name -> UD folder/file stem.
declare -A ud=([LinES]=UD_English-LinES/en_lines [GUM]=UD_English-GUM/en_gum
               [AfriBooms]=UD_Afrikaans-AfriBooms/af_afribooms)
names=()
if ((quick)); then
  names=(Toy)
else
  IFS=, read -r -a names <<< "$treebanks"
  ((${#names[@]})) || die "--treebanks '$treebanks': no treebank named"
  for name in "${names[@]}"; do
    [ -n "${ud[$name]+x}" ] || die "--treebanks: '$name' is not one of LinES, GUM, AfriBooms"
    for split in train dev test; do
      f=$data/${ud[$name]}-ud-$split.conllu
      [ -s "$f" ] || die "--data $data: no $f (expected the UD v2.2 treebanks)"
    done
  done
fi
if [ -z "$out" ]; then out=$build/experiments/tagger-table2$( ((quick)) && echo -quick); fi
mkdir -p "$out" 2>/dev/null || die "--out $out: cannot create directory"
[ -w "$out" ] || die "--out $out: not writable"
out=$(cd "$out" && pwd)
cd "$out"

# Where seed S of a system trains, tags and is scored: the first seed keeps the one-seed
# layout, so that runs made before --seeds stay valid and resumable.
save_dir_of() { if (($2 == seed)); then echo "$1"; else echo "$1/seed$2"; fi; }
hyp_dir_of() { if (($1 == seed)); then echo "hyp"; else echo "hyp/seed$1"; fi; }
scores_suffix_of() { (($1 == seed)) || echo ".seed$1"; }
# The seed a save directory was trained with (its run.json's command line), empty if none.
trained_seed() { [ ! -s "$1/run.json" ] || sed -n 's/.*"command": "[^"]* --seed \([0-9]*\).*/\1/p' "$1/run.json" | head -1; }

train_args=()
if ((quick)); then
  train_args+=(--max-epoch 3 --set model.tagger.word_dim=16 --set model.tagger.char_dim=8
               --set model.tagger.char_filters=8 --set model.tagger.layers=2 --set model.tagger.heads=2
               --set optimization.lr=0.005 --set dataset.max_sentences=16)
  setting="Quick check (--quick): a synthetic treebank (tools/csan-toy-treebank, 300 / 60 / 60 sentences), word 16, characters 8, 2 layers of 2 heads, lr 0.005, 16 chunks per batch, 3 epochs, $seed_words. Numbers say nothing about the paper."
  if [ ! -s raw/test.conllu ]; then
    step "synthetic treebank -> $out/raw"
    "$build/tools/csan-toy-treebank" --out-dir raw --train 300 --dev 60 --test 60 2>/dev/null
  fi
else
  [ -n "$max_epoch" ] && train_args+=(--max-epoch "$max_epoch")
  setting="UD v2.2, the convatt vocabulary protocol (word types of train+dev+test, the most frequent half kept; chunks of 60 words, 20 characters), the paper's UD setting (words 128, characters 64, 4 layers of 4 heads, d 192, dropout 0.1, RMSprop lr 1e-3, 32 chunks per batch), early stopping on dev accuracy with patience 3${max_epoch:+, at most $max_epoch epochs}, $seed_words."
fi
# With several seeds, 4 decimals: the means and deviations are of the scores, not of their
# roundings (one seed keeps csan-score's default and today's table).
width=()
((${#seeds[@]} == 1)) || width=(-w 4)

specs=()
for name in "${names[@]}"; do
  # Split files are $prefix{train,dev,test}.conllu.
  if ((quick)); then prefix=$out/raw/; else prefix=$data/${ud[$name]}-ud-; fi
  if [ ! -s "data-bin/$name/preprocess.json" ]; then
    step "preprocessing $name -> $out/data-bin/$name"
    mkdir -p data-bin
    "$bin/csan-preprocess" --task tagging --vocab-protocol convatt --trainpref "${prefix}train" \
      --validpref "${prefix}dev" --testpref "${prefix}test" --destdir "data-bin/$name" 2> "data-bin/$name.log" ||
      { tail -3 "data-bin/$name.log" >&2; die "csan-preprocess failed for $name (log: $out/data-bin/$name.log)"; }
  fi
  for s in "${seeds[@]}"; do
    for label in "${systems[@]}"; do
      dir=$(save_dir_of "$name/${recipe_of[$label]}" "$s") hyp_dir=$(hyp_dir_of "$s")/$name
      of_seed=$( ((${#seeds[@]} == 1)) || echo " (seed $s)")
      previous=$(trained_seed "$dir")
      [ -z "$previous" ] || ((previous == s)) ||
        die "$out/$dir: trained with seed $previous, not $s (the first seed trains in $name/${recipe_of[$label]}; use another --out or keep the first seed)"
      mkdir -p "$dir" "$hyp_dir/dev" "$hyp_dir/test"
      step "training $name $label$of_seed -> $out/$dir (log: $dir/train.log)"
      # Appended, not replaced: a resumed run's log keeps the first part's lines.
      "$bin/csan-train" "$root/recipes/tagger-${recipe_of[$label]}.yaml" --data "data-bin/$name" --save-dir "$dir" \
        --seed "$s" "${train_args[@]}" >> "$dir/train.log" 2>&1 ||
        { tail -3 "$dir/train.log" >&2; die "csan-train failed for $name $label$of_seed (log: $out/$dir/train.log)"; }
      for split in dev test; do
        hyp="$hyp_dir/$split/$label"
        if [ ! -s "$hyp" ] || [ "$dir/checkpoint_best.pt" -nt "$hyp" ]; then
          step "tagging $name $split with $label$of_seed"
          "$bin/csan-generate" --path "$dir/checkpoint_best.pt" --input "$prefix$split.conllu" > "$hyp.tmp" \
            2> "$hyp.log" || { tail -3 "$hyp.log" >&2; die "csan-generate failed for $name $label$of_seed on $split"; }
          mv "$hyp.tmp" "$hyp"
        fi
      done
    done
    for split in dev test; do
      scores=$name/$split-scores$(scores_suffix_of "$s").json
      step "scoring $name $split$of_seed (all / OOV / ambiguous, paired bootstrap against PE[add])"
      # Inside the hyp folder of TREEBANK/SPLIT, so that csan-score names the systems by their labels.
      (cd "$(hyp_dir_of "$s")/$name/$split" && "$bin/csan-score" --task tagging "$prefix$split.conllu" -i "${systems[@]}" \
         --train "${prefix}train.conllu" --vocab "$out/data-bin/$name/dict.words.txt" --paired-bs ${width[@]+"${width[@]}"} \
         -f json > "$out/$scores.tmp" 2> "$out/${scores%.json}.log") ||
        { tail -3 "${scores%.json}.log" >&2; die "csan-score failed on $name $split$of_seed"; }
      mv "$scores.tmp" "$scores"
    done
  done
  specs+=("$name:$out/$name")
done

commit=$(git -C "$root" describe --always --dirty 2>/dev/null || echo unknown)
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
setting="$setting Commit $commit; $(nproc --all) CPU cores (${cpu:-unknown CPU}), load average $load_at_start when the script started; $(date -u +%Y-%m-%d)."
system_args=()
for label in "${systems[@]}"; do system_args+=(--system "$label=${recipe_of[$label]}"); done
title=$(IFS=,; echo "${systems[*]}" | sed "s/,/, /g")  # the labels of the paper's columns
"$python" "$root/tools/experiments/tagger_results_table.py" --output results.md \
  --title "Convoluted attention, Table 2d: $title" --setting "$setting" "${system_args[@]}" \
  --seeds "$(IFS=,; echo "${seeds[*]}")" "${specs[@]}" ||
  die "the results table could not be written"

plots=""
if "$python" -c 'import matplotlib' 2>/dev/null; then
  for name in "${names[@]}"; do
    curve_dirs=() curve_labels=()
    for label in "${systems[@]}"; do
      for s in "${seeds[@]}"; do
        # plot-curves draws the runs of one label as one system's seeds (faint, and their mean).
        curve_dirs+=("$(save_dir_of "$name/${recipe_of[$label]}" "$s")") curve_labels+=(--label "$label")
      done
    done
    "$python" "$root/tools/plot-curves" "${curve_dirs[@]}" "${curve_labels[@]}" --x epoch \
      --metric accuracy --title "$name: dev accuracy of $title ($seed_words)" -o "$name-curves.png"
    plots+=" $name-curves.png"
  done
else
  step "no plots: python3-matplotlib is not installed (tools/install-deps.sh --plots); the table is written"
fi
cat results.md
step "wrote $out/results.md$plots"
