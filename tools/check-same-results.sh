#!/usr/bin/env bash
# Proof that a refactoring moved nothing: runs the toy pipeline (seeded toy corpus ->
# csan-preprocess -> csan-train with validation and BLEU validation -> csan-generate,
# beam 5, 2-best) with two builds of csan on the same inputs, for a Transformer, 1-D and
# 2-D CSAN and a pre-norm Transformer, and compares what each produced:
#   - the training log (metrics.jsonl without its wall-clock fields wps, ups, wall, and
#     without the task name that later builds add to each record),
#   - every parameter and buffer of checkpoint_last.pt (read back with Debian's
#     python3-torch, which loads csan's archives as TorchScript modules),
#   - csan-generate's output (without its timing line).
#   tools/check-same-results.sh OLD_BUILD_DIR NEW_BUILD_DIR [WORK_DIR]
# OLD_BUILD_DIR holds the earlier commit's cli/ and tools/ (e.g. a copy of build/ taken
# before the change). Exits 1 at the first difference, printing it.
source "$(dirname "$0")/script-help.sh"
help_if_asked "$0" "$@"
set -euo pipefail
old=$(cd "$1" && pwd)
new=$(cd "$2" && pwd)
work=${3:-$(mktemp -d /tmp/csan-same-results.XXXXXX)}
root=$(cd "$(dirname "$0")/.." && pwd)
python=/usr/bin/python3
if ! "$python" -c 'import torch' 2>/dev/null; then
  echo "check-same-results: needs Debian's python3-torch (apt-get install python3-torch)" >&2
  exit 2
fi
mkdir -p "$work"
cd "$work"

"$new/tools/csan-toy-corpus" --out-dir raw --train 3000 --valid 200 --test 200 --seed 1 2>/dev/null
"$new/cli/csan-preprocess" --source-lang src --target-lang tgt --trainpref raw/train --validpref raw/valid \
  --testpref raw/test --destdir data-bin --joined-dictionary --spm-vocab-size 200 --workers 2 2>/dev/null

cat > parameters.py <<'EOF'
import hashlib, io, sys, torch
archive = open(sys.argv[1], 'rb').read()[:-24]  # csan's checksum trailer
model = getattr(torch.jit.load(io.BytesIO(archive)), 'section.model')
named = dict(model.named_parameters())
named.update({'buffer ' + k: v for k, v in model.named_buffers()})
for name in sorted(named):
    t = named[name].detach().contiguous()
    print(name, tuple(t.shape), hashlib.sha256(t.numpy().tobytes()).hexdigest())
EOF

run() {  # build label recipe extra-args...
  local build=$1 label=$2 recipe=$3
  shift 3
  local dir=$label/$(basename "$build")
  mkdir -p "$dir"
  "$build/cli/csan-train" "$recipe" --data data-bin --save-dir "$dir/ckpt" --max-update 120 --seed 3 \
    --log-interval 10 --validate-interval-updates 40 --eval-bleu --set task.eval_bleu_beam=2 "$@" \
    > "$dir/train.log" 2>&1
  sed -E 's/, "(ups|wall|wps|task)": [^,}]*//g; s/"(ups|wall|wps|task)": [^,}]*, //g' "$dir/ckpt/metrics.jsonl" > "$dir/metrics"
  "$python" parameters.py "$dir/ckpt/checkpoint_last.pt" > "$dir/parameters"
  "$build/cli/csan-generate" --path "$dir/ckpt/checkpoint_last.pt" --data data-bin --beam 5 --nbest 2 2>/dev/null |
    grep -v '^Translated ' > "$dir/generate"
}

status=0
compare() {  # label recipe extra-args...
  local label=$1
  run "$old" "$@"
  run "$new" "$@"
  for what in metrics parameters generate; do
    if ! diff -q "$label/$(basename "$old")/$what" "$label/$(basename "$new")/$what" > /dev/null; then
      echo "$label: $what differ:"
      diff "$label/$(basename "$old")/$what" "$label/$(basename "$new")/$what" | head -5
      status=1
    fi
  done
  [ $status = 0 ] && echo "$label: training log, parameters and translations identical" \
    "($(wc -l < "$label/$(basename "$new")/metrics") log records, $(wc -l < "$label/$(basename "$new")/parameters") tensors," \
    "$(grep -c '^H-' "$label/$(basename "$new")/generate") hypotheses)"
  return 0
}

compare transformer "$root/recipes/tiny-transformer.yaml"
compare csan1d "$root/recipes/tiny-transformer.yaml" --arch csan1d_tiny
compare csan2d "$root/recipes/tiny-transformer.yaml" --arch csan2d_tiny --set model.csan.decoder_layers=[1]
compare prenorm "$root/recipes/tiny-transformer.yaml" --set model.normalize_before=true --set model.attn_bias=false
exit $status
