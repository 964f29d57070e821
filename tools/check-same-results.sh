#!/usr/bin/env bash
# Proof that a refactoring moved nothing: runs small pipelines with two builds of csan on
# the same inputs and compares what each produced:
#   - the seeded toy corpus and toy treebank (csan-toy-corpus, csan-toy-treebank), byte
#     for byte;
#   - csan-preprocess's data (translation with SentencePiece, and tagging): every file byte
#     for byte, preprocess.json by value;
#   - csan-train (120 updates with validation and BLEU validation; the tagger 2 epochs) on
#     the new build's data, then csan-generate, for a Transformer, 1-D and 2-D CSAN, a
#     pre-norm Transformer, CCN, a locality baseline (REL_POS everywhere) and the tagger
#     (Conv2d on the toy treebank), comparing
#       the training log (metrics.jsonl by value, without its wall-clock and memory fields
#       wps, ups, wall, rss_mib, peak_rss_mib, and without the task name that later builds
#       add to each record),
#       every parameter and buffer of checkpoint_last.pt (read back with Debian's
#       python3-torch, which loads csan's archives as TorchScript modules),
#       csan-generate's output: beam 5, 2-best translations (without the timing line), or
#       the tagged CoNLL-U.
#   tools/check-same-results.sh OLD_BUILD_DIR NEW_BUILD_DIR [WORK_DIR]
# OLD_BUILD_DIR holds the earlier commit's cli/ and tools/ (e.g. a copy of build/ taken
# before the change). Prints one line per comparison; exits 1 if anything differs (after
# printing the first lines of each difference) or a build fails to run.
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

cat > parameters.py <<'EOF'
# The model's tensors (parameters and buffers by name) of a checkpoint in format 2 (LibTorch
# archive + checksum trailer) or 3 (safetensors: the model's tensors under their own names,
# csan's other entries under prefixes), so that builds writing different formats compare.
import hashlib, io, json, struct, sys
data = open(sys.argv[1], 'rb').read()
tensors = {}
(header_size,) = struct.unpack('<Q', data[:8])
if data[8:9] == b'{' and header_size < len(data):
    header = json.loads(data[8:8 + header_size])
    body = data[8 + header_size:]
    for name, entry in header.items():
        if name == '__metadata__' or name.startswith(('section.', 'rng.', 'meta.data.', 'optimizer.')):
            continue
        begin, end = entry['data_offsets']
        tensors[name] = (tuple(entry['shape']), body[begin:end])
else:
    import torch
    model = getattr(torch.jit.load(io.BytesIO(data[:-24])), 'section.model')  # csan's checksum trailer
    named = dict(model.named_parameters())
    named.update(dict(model.named_buffers()))
    for name, t in named.items():
        t = t.detach().contiguous()
        tensors[name] = (tuple(t.shape), t.numpy().tobytes())
for name in sorted(tensors):
    shape, raw = tensors[name]
    print(name, shape, hashlib.sha256(raw).hexdigest())
EOF
# Each record by value: numbers as doubles (1, 1.0 and 1.00000000000000000 alike), keys
# sorted, fields that are not results dropped.
cat > metrics.py <<'EOF'
import json, sys
for line in open(sys.argv[1]):
    record = json.loads(line, parse_int=float)
    for key in ('wps', 'ups', 'wall', 'rss_mib', 'peak_rss_mib', 'task'):
        record.pop(key, None)
    print(json.dumps(record, sort_keys=True))
EOF
cat > settings.py <<'EOF'
import json, sys
a, b = (json.load(open(p), parse_int=float) for p in sys.argv[1:3])
sys.exit(0 if a == b else 1)
EOF

# Each build's outputs go to old/ and new/ subdirectories (the build directories are
# usually both named build).
declare -A builds=([old]=$old [new]=$new)
status=0
differs() {  # label what diff-args...: reports a difference (status 0) or says nothing (1)
  local label=$1 what=$2
  shift 2
  diff -q "$@" > /dev/null && return 1
  echo "$label: $what differ:"
  diff "$@" | head -5 || true
  status=1
}
fail() {  # label log
  echo "$1: failed; the last lines of $2:" >&2
  tail -5 "$2" >&2
  exit 1
}

# ---- inputs: the seeded toy data of both builds, and both builds' preprocessing
for b in old new; do
  "${builds[$b]}/tools/csan-toy-corpus" --out-dir "raw-$b" --train 3000 --valid 200 --test 200 --seed 1 2>/dev/null
  "${builds[$b]}/tools/csan-toy-treebank" --out-dir "treebank-$b" --train 300 --dev 60 --test 60 --seed 7 2>/dev/null
done
for data in raw treebank; do
  differs "$data" "files" -r "$data-old" "$data-new" || echo "$data: identical ($(cat "$data-new"/* | wc -l) lines)"
done
rm -rf raw treebank && cp -r raw-new raw && cp -r treebank-new treebank

preprocess() {  # build destdir task-args...
  local build=$1 dest=$2
  shift 2
  "$build/cli/csan-preprocess" --destdir "$dest" "$@" > "$dest.log" 2>&1 || fail "csan-preprocess ($build)" "$dest.log"
}
compare_data() {  # label task-args...
  local label=$1
  shift
  preprocess "$old" "$label-old" "$@"
  preprocess "$new" "$label-new" "$@"
  local same=1
  differs "$label" "data files" -r -x preprocess.json "$label-old" "$label-new" && same=0
  if ! "$python" settings.py "$label-old/preprocess.json" "$label-new/preprocess.json"; then
    echo "$label: preprocess.json values differ:"
    diff "$label-old/preprocess.json" "$label-new/preprocess.json" | head -5 || true
    status=1
    same=0
  fi
  ((same)) && echo "$label: data identical ($(ls "$label-new" | wc -l) files)"
  return 0
}
compare_data data-bin --source-lang src --target-lang tgt --trainpref raw/train --validpref raw/valid \
  --testpref raw/test --joined-dictionary --spm-vocab-size 200 --workers 2
compare_data tagging-bin --task tagging --vocab-protocol convatt --trainpref treebank/train \
  --validpref treebank/dev --testpref treebank/test
mv data-bin-new data-bin && mv tagging-bin-new tagging-bin

# ---- training and generation
train() {  # build dir recipe args...
  local build=$1 dir=$2 recipe=$3
  shift 3
  mkdir -p "$dir"
  "$build/cli/csan-train" "$recipe" --save-dir "$dir/ckpt" --seed 3 "$@" > "$dir/train.log" 2>&1 ||
    fail "csan-train ($build)" "$dir/train.log"
  "$python" metrics.py "$dir/ckpt/metrics.jsonl" > "$dir/metrics"
  "$python" parameters.py "$dir/ckpt/checkpoint_last.pt" > "$dir/parameters"
}
translate() {  # build dir
  "$1/cli/csan-generate" --path "$2/ckpt/checkpoint_last.pt" --data data-bin --beam 5 --nbest 2 2> "$2/generate.log" |
    grep -v '^Translated ' > "$2/generate" || fail "csan-generate ($1)" "$2/generate.log"
}
tag() {  # build dir
  "$1/cli/csan-generate" --path "$2/ckpt/checkpoint_last.pt" --input treebank/test.conllu > "$2/generate" \
    2> "$2/generate.log" || fail "csan-generate ($1)" "$2/generate.log"
}
compare_runs() {  # label
  local label=$1 what same=1
  for what in metrics parameters generate; do
    differs "$label" "$what" "$label/old/$what" "$label/new/$what" && same=0
  done
  ((same)) && echo "$label: training log, parameters and outputs identical ($(wc -l < "$label/new/metrics") log" \
    "records, $(wc -l < "$label/new/parameters") tensors," \
    "$(grep -c -e '^H-' -e $'^[0-9][0-9]*\t' "$label/new/generate" || true) hypotheses or tagged words)"
  return 0
}
compare() {  # label recipe extra-args...: translation
  local label=$1 b
  shift
  for b in old new; do
    train "${builds[$b]}" "$label/$b" "$@" --data data-bin --max-update 120 --log-interval 10 \
      --validate-interval-updates 40 --eval-bleu --set task.eval_bleu_beam=2
    translate "${builds[$b]}" "$label/$b"
  done
  compare_runs "$label"
}
compare_tagger() {  # label recipe extra-args...: tagging
  local label=$1 b
  shift
  for b in old new; do
    train "${builds[$b]}" "$label/$b" "$@" --data tagging-bin --max-epoch 2 --log-interval 5 \
      --set model.tagger.word_dim=16 --set model.tagger.char_dim=8 --set model.tagger.char_filters=8 \
      --set model.tagger.layers=2 --set model.tagger.heads=2 --set optimization.lr=0.005 \
      --set dataset.max_sentences=16
    tag "${builds[$b]}" "$label/$b"
  done
  compare_runs "$label"
}

tiny=$root/recipes/tiny-transformer.yaml
compare transformer "$tiny"
compare csan1d "$tiny" --arch csan1d_tiny
compare csan2d "$tiny" --arch csan2d_tiny --set model.csan.decoder_layers=[1]
compare prenorm "$tiny" --set model.normalize_before=true --set model.attn_bias=false
compare ccn "$root/recipes/ccn-tiny.yaml"
compare rel_pos "$tiny" --set "model.attention.encoder.self=[rel_pos]" --set "model.attention.decoder.self=[rel_pos]" \
  --set "model.attention.decoder.cross=[rel_pos]" --set model.rel_pos.clip=16 \
  --set "model.rel_pos.encoder_layers=[0, 1]" --set "model.rel_pos.decoder_layers=[0, 1]" \
  --set "model.rel_pos.cross_layers=[0, 1]"
compare_tagger tagger "$root/recipes/tagger-conv2d.yaml"
exit $status
