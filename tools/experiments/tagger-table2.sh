#!/usr/bin/env bash
# Dufter, Schmitt & Schütze (COLING 2020) Table 2d in one command: SAN+PE[add] vs
# SAN+PE[add]+Conv2d (recipes/tagger-pe-add.yaml, recipes/tagger-conv2d.yaml) on UD v2.2
# treebanks with the paper's protocol: the convatt vocabulary protocol, RMSprop, 32 chunks
# of 60 words per batch, early stopping on dev accuracy with patience 3, best checkpoint.
# Tags dev and test with csan-generate, scores them with csan-score --task tagging (all /
# OOV / ambiguous tokens, paired bootstrap Conv2d vs PE[add]) and writes OUT/results.md
# (tools/experiments/tagger_results_table.py: the table next to the paper's, and the dev
# accuracy per epoch of both systems) and, with Debian's python3-matplotlib,
# OUT/TREEBANK-curves.png (tools/plot-curves, against epochs).
#
#   tools/experiments/tagger-table2.sh [--quick] [--out DIR] [--build DIR] [--data UD_DIR]
#                                      [--treebanks LinES,GUM,AfriBooms] [--max-epoch N] [--seed N]
#
# full     UD_DIR (default ../shared/data/ud) holds UD_English-LinES, UD_English-GUM and
#          UD_Afrikaans-AfriBooms; both systems train to early stopping (at most 100
#          epochs). A LinES epoch takes about 20-30 wall seconds (training and validation,
#          one thread, an idle machine; bench-tagger gives the CPU seconds): about 15-30
#          minutes per system and treebank, 2-3 hours for the whole table on 2 cores.
# --quick  a synthetic treebank (tools/csan-toy-treebank: 300 / 60 / 60 sentences), tiny
#          dimensions, 3 epochs: about a minute; checks the pipeline, not the paper
#          (ctest runs it).
# Rerunning continues: data and finished steps are kept, training resumes from
# checkpoint_last.pt. Only the executables' command lines are used.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
source "$root/tools/script-help.sh"
read -r load_at_start _ < /proc/loadavg  # times per epoch mean little on a busy machine
die() { echo "tagger-table2: error: $*" >&2; exit 1; }
step() { echo "tagger-table2: $*" >&2; }

quick=0 out="" build=${CSAN_BUILD_DIR:-$root/build} data=$root/../shared/data/ud seed=42 max_epoch=""
treebanks=LinES,GUM,AfriBooms
while (($#)); do
  case "$1" in
    --quick) quick=1 ;;
    --out|--build|--data|--seed|--treebanks|--max-epoch)
      (($# >= 2)) || die "$1 needs a value"
      case "$1" in
        --out) out=$2 ;; --build) build=$2 ;; --data) data=$2 ;; --seed) seed=$2 ;;
        --treebanks) treebanks=$2 ;; --max-epoch) max_epoch=$2 ;;
      esac
      shift ;;
    -h|--help) script_help "$0"; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
  shift
done
[[ $seed =~ ^[0-9]+$ ]] || die "--seed '$seed': not a non-negative integer"
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

train_args=(--seed "$seed")
if ((quick)); then
  train_args+=(--max-epoch 3 --set model.tagger.word_dim=16 --set model.tagger.char_dim=8
               --set model.tagger.char_filters=8 --set model.tagger.layers=2 --set model.tagger.heads=2
               --set optimization.lr=0.005 --set dataset.max_sentences=16)
  setting="Quick check (--quick): a synthetic treebank (tools/csan-toy-treebank, 300 / 60 / 60 sentences), word 16, characters 8, 2 layers of 2 heads, lr 0.005, 16 chunks per batch, 3 epochs, seed $seed. Numbers say nothing about the paper."
  if [ ! -s raw/test.conllu ]; then
    step "synthetic treebank -> $out/raw"
    "$build/tools/csan-toy-treebank" --out-dir raw --train 300 --dev 60 --test 60 2>/dev/null
  fi
else
  [ -n "$max_epoch" ] && train_args+=(--max-epoch "$max_epoch")
  setting="UD v2.2, the convatt vocabulary protocol (word types of train+dev+test, the most frequent half kept; chunks of 60 words, 20 characters), the paper's UD setting (words 128, characters 64, 4 layers of 4 heads, d 192, dropout 0.1, RMSprop lr 1e-3, 32 chunks per batch), early stopping on dev accuracy with patience 3${max_epoch:+, at most $max_epoch epochs}, seed $seed."
fi

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
  for system in pe-add conv2d; do
    label=$([ $system = pe-add ] && echo "PE[add]" || echo Conv2d)
    dir=$name/$system
    mkdir -p "$dir" "hyp/$name/dev" "hyp/$name/test"
    step "training $name $label -> $out/$dir (log: $dir/train.log)"
    # Appended, not replaced: a resumed run's log keeps the first part's lines.
    "$bin/csan-train" "$root/recipes/tagger-$system.yaml" --data "data-bin/$name" --save-dir "$dir" \
      "${train_args[@]}" >> "$dir/train.log" 2>&1 ||
      { tail -3 "$dir/train.log" >&2; die "csan-train failed for $name $label (log: $out/$dir/train.log)"; }
    for split in dev test; do
      hyp="hyp/$name/$split/$label"
      if [ ! -s "$hyp" ] || [ "$dir/checkpoint_best.pt" -nt "$hyp" ]; then
        step "tagging $name $split with $label"
        "$bin/csan-generate" --path "$dir/checkpoint_best.pt" --input "$prefix$split.conllu" > "$hyp.tmp" \
          2> "$hyp.log" || { tail -3 "$hyp.log" >&2; die "csan-generate failed for $name $label on $split"; }
        mv "$hyp.tmp" "$hyp"
      fi
    done
  done
  for split in dev test; do
    step "scoring $name $split (all / OOV / ambiguous, paired bootstrap Conv2d vs PE[add])"
    # Inside hyp/TREEBANK/SPLIT, so that csan-score names the systems PE[add] and Conv2d.
    (cd "hyp/$name/$split" && "$bin/csan-score" --task tagging "$prefix$split.conllu" -i "PE[add]" Conv2d \
       --train "${prefix}train.conllu" --vocab "$out/data-bin/$name/dict.words.txt" --paired-bs -f json \
       > "$out/$name/$split-scores.json.tmp" 2> "$out/$name/$split-scores.log") ||
      { tail -3 "$name/$split-scores.log" >&2; die "csan-score failed on $name $split"; }
    mv "$name/$split-scores.json.tmp" "$name/$split-scores.json"
  done
  specs+=("$name:$out/$name")
done

commit=$(git -C "$root" describe --always --dirty 2>/dev/null || echo unknown)
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
setting="$setting Commit $commit; $(nproc --all) CPU cores (${cpu:-unknown CPU}), load average $load_at_start when the script started; $(date -u +%Y-%m-%d)."
"$python" "$root/tools/experiments/tagger_results_table.py" --output results.md \
  --title "Convoluted attention, Table 2d: SAN+PE[add] vs SAN+PE[add]+Conv2d" --setting "$setting" "${specs[@]}" ||
  die "the results table could not be written"

plots=""
if "$python" -c 'import matplotlib' 2>/dev/null; then
  for name in "${names[@]}"; do
    "$python" "$root/tools/plot-curves" "$name/pe-add" "$name/conv2d" --label "PE[add]" --label Conv2d --x epoch \
      --metric accuracy --title "$name: SAN+PE[add] vs SAN+PE[add]+Conv2d (seed $seed)" -o "$name-curves.png"
    plots+=" $name-curves.png"
  done
else
  step "no plots: python3-matplotlib is not installed (tools/install-deps.sh --plots); the table is written"
fi
cat results.md
step "wrote $out/results.md$plots"
