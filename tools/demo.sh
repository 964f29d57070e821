#!/usr/bin/env bash
# The whole pipeline on the built-in toy corpus: installs dependencies if missing,
# builds, generates the corpus, preprocesses it (and, as the toolkit grows, trains,
# translates and scores it). Everything goes to ${CSAN_DEMO_DIR:-demo-output}.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${CSAN_BUILD_DIR:-$root/build}
out=${CSAN_DEMO_DIR:-$root/demo-output}

"$root/tools/install-deps.sh"
"$root/tools/build.sh"
mkdir -p "$out"

echo "== 1. toy corpus"
"$build/tools/csan-toy-corpus" --out-dir "$out/raw" --train 20000 --valid 500 --test 500 --seed 1

echo "== 2. preprocess (SentencePiece + dictionaries + binarized splits)"
"$build/cli/csan-preprocess" --source-lang src --target-lang tgt \
  --trainpref "$out/raw/train" --validpref "$out/raw/valid" --testpref "$out/raw/test" \
  --destdir "$out/data-bin" --joined-dictionary --spm-vocab-size 1000 --workers 2
