#!/usr/bin/env bash
# The whole pipeline on the built-in toy corpus: installs dependencies if missing,
# builds, generates the corpus, preprocesses it, trains the tiny Transformer, translates
# the test set and prints its BLEU. Everything goes to ${CSAN_DEMO_DIR:-demo-output};
# CSAN_DEMO_EPOCHS (default 10) sets the training length and CSAN_DEMO_TRAIN_SENTENCES
# (default 20000) the training corpus's size, CSAN_DEMO_SPM_VOCAB (default 800) its
# SentencePiece vocabulary (a smaller corpus has fewer pieces). CSAN_DEMO_SKIP_SETUP=1 skips the
# install and build steps and uses the executables already in CSAN_BUILD_DIR (ctest's
# Demo test runs the pipeline so, one short epoch long, from inside a build).
#   tools/demo.sh [--help]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/tools/script-help.sh"
for a in "$@"; do
  case $a in
    -h | --help) script_help "$0"; exit 0 ;;
    *) echo "demo.sh: error: unknown argument '$a' (settings are environment variables; see --help)" >&2; exit 2 ;;
  esac
done
build=${CSAN_BUILD_DIR:-$root/build}
out=${CSAN_DEMO_DIR:-$root/demo-output}
epochs=${CSAN_DEMO_EPOCHS:-10}
train_sentences=${CSAN_DEMO_TRAIN_SENTENCES:-20000}
spm_vocab=${CSAN_DEMO_SPM_VOCAB:-800}

if [ "${CSAN_DEMO_SKIP_SETUP:-0}" != 1 ]; then
  "$root/tools/install-deps.sh"
  "$root/tools/build.sh"
fi
rm -rf "$out"
mkdir -p "$out"

echo "== 1. toy corpus"
"$build/tools/csan-toy-corpus" --out-dir "$out/raw" --train "$train_sentences" --valid 500 --test 500 --seed 1

echo "== 2. preprocess (SentencePiece + dictionaries + binarized splits)"
"$build/cli/csan-preprocess" --source-lang src --target-lang tgt \
  --trainpref "$out/raw/train" --validpref "$out/raw/valid" --testpref "$out/raw/test" \
  --destdir "$out/data-bin" --joined-dictionary --spm-vocab-size "$spm_vocab" --workers 2

echo "== 3. train tiny-transformer ($epochs epochs)"
"$build/cli/csan-train" "$root/recipes/tiny-transformer.yaml" \
  --data "$out/data-bin" --save-dir "$out/checkpoints" --max-epoch "$epochs"

echo "== 4. translate the test set (beam 5)"
"$build/cli/csan-generate" --path "$out/checkpoints/checkpoint_best.pt" \
  --input "$out/raw/test.src" --beam 5 --output-format plain > "$out/test.hyp"

echo "== 5. score"
"$build/cli/csan-score" "$out/raw/test.tgt" -i "$out/test.hyp" -m bleu chrf -f text --force
