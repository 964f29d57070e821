#!/usr/bin/env bash
# Proof that a change moved no decoding result: trains small models on the seeded toy
# corpus with OLD_BUILD (a Transformer with its own output projection, one with tied
# embeddings, CCN, 2-D CSAN and three locality baselines whose attention entries have
# projections of their own), builds a lexical shortlist, then decodes each with both
# builds' csan-generate (beam 5, 2-best) and compares the outputs (without the timing line):
#   - --precision fp32, bf16 and int8, each without and with --shortlist;
#   - int8 on LibTorch's quantized engine (CSAN_INT8_KERNEL=libtorch) and with --quantize-skip;
#   - a two-model int8 ensemble, and raw text through --input (parallel batches);
#   - inference-only checkpoints (convert-checkpoint int8 and bf16): the files each build
#     writes are compared byte for byte, and each build decodes the other's; where the builds
#     write different formats (2 and 3), each decodes its own file and the outputs compare.
#   tools/check-same-decoding.sh OLD_BUILD_DIR NEW_BUILD_DIR [WORK_DIR]
# Runs on 2 threads (OMP_NUM_THREADS=2) for both builds. Exits 1 if anything differs,
# printing the first lines of each difference.
source "$(dirname "$0")/script-help.sh"
help_if_asked "$0" "$@"
set -euo pipefail
old=$(cd "$1" && pwd)
new=$(cd "$2" && pwd)
work=${3:-$(mktemp -d /tmp/csan-same-decoding.XXXXXX)}
root=$(cd "$(dirname "$0")/.." && pwd)
export OMP_NUM_THREADS=2
mkdir -p "$work"
cd "$work"

if [ ! -d data-bin ]; then
  "$old/tools/csan-toy-corpus" --out-dir raw --train 3000 --valid 200 --test 200 --seed 1 2>/dev/null
  "$old/cli/csan-preprocess" --source-lang src --target-lang tgt --trainpref raw/train --validpref raw/valid \
    --testpref raw/test --destdir data-bin --joined-dictionary --spm-vocab-size 200 --workers 2 2>/dev/null
  "$old/tools/build-shortlist" --data data-bin -s src -t tgt --top-k 20 --frequent 30 --output shortlist.txt 2>/dev/null
fi

train() {  # label extra-args...
  local label=$1
  shift
  [ -f "models/$label/checkpoint_last.pt" ] && return 0
  "$old/cli/csan-train" "$root/recipes/tiny-transformer.yaml" --data data-bin --save-dir "models/$label" \
    --max-update 150 --seed 3 --log-interval 50 "$@" > "models/$label.log" 2>&1
}

status=0
checked=0
# same_format A B: whether two checkpoint files have one format (formats 1 and 2 are zip
# archives, "PK"; format 3 is safetensors, whose first 8 bytes are its header's length).
is_archive() { [ "$(head -c 2 "$1")" = PK ]; }
same_format() { if is_archive "$1"; then is_archive "$2"; else ! is_archive "$2"; fi; }
# decode NAME CHECKPOINT args...: both builds, outputs compared.
decode() {
  local name=$1 checkpoint=$2
  shift 2
  decode_each "$name" "$checkpoint" "$checkpoint" "$@"
}
# decode_each NAME OLD_BUILDS_CHECKPOINT NEW_BUILDS_CHECKPOINT args...: each build decodes its
# own file, outputs compared.
decode_each() {
  local name=$1 old_checkpoint=$2 new_checkpoint=$3
  shift 3
  mkdir -p out/old out/new
  for side in old new; do
    local build=$old checkpoint=$old_checkpoint
    [ $side = new ] && build=$new checkpoint=$new_checkpoint
    "$build/cli/csan-generate" --path "$checkpoint" --beam 5 --nbest 2 "$@" 2> "out/$side/$name.log" |
      grep -v '^Translated ' > "out/$side/$name" || {
      echo "$name: $side build failed: $(tail -1 "out/$side/$name.log")"
      status=1
      return 0
    }
  done
  checked=$((checked + 1))
  if ! cmp -s "out/old/$name" "out/new/$name"; then
    echo "$name: outputs differ:"
    diff "out/old/$name" "out/new/$name" | head -5 || true
    status=1
  fi
}

check_model() {  # label
  local label=$1 ckpt=models/$1/checkpoint_last.pt
  for precision in fp32 bf16 int8; do
    decode "$label.$precision" "$ckpt" --data data-bin --precision "$precision"
    decode "$label.$precision.shortlist" "$ckpt" --data data-bin --precision "$precision" --shortlist shortlist.txt
  done
  CSAN_INT8_KERNEL=libtorch decode "$label.int8-libtorch" "$ckpt" --data data-bin --precision int8
  CSAN_INT8_KERNEL=libtorch decode "$label.int8-libtorch.shortlist" "$ckpt" --data data-bin --precision int8 \
    --shortlist shortlist.txt
}

mkdir -p models
train transformer --set model.share_all_embeddings=false
train tied --set model.share_all_embeddings=true
train ccn --arch ccn_tiny
train csan2d --arch csan2d_tiny --set model.csan.decoder_layers=[1]
train block --arch locality_block_tiny
train cnns --arch locality_cnns_tiny
train local_soft --arch locality_local_soft_tiny
for label in transformer tied ccn csan2d block cnns local_soft; do check_model "$label"; done

t=models/transformer/checkpoint_last.pt
decode transformer.int8.skip "$t" --data data-bin --precision int8 --quantize-skip decoder.layers.0 \
  decoder.output_projection
decode transformer.bf16.skip "$t" --data data-bin --precision bf16 --quantize-skip encoder
decode ensemble.int8 "$t:models/tied/checkpoint_last.pt" --data data-bin --precision int8 --shortlist shortlist.txt
decode transformer.int8.input "$t" --input raw/test.src --precision int8 --shortlist shortlist.txt --batch-size 16
decode transformer.bf16.input "$t" --input raw/test.src --precision bf16 --batch-size 16

# Inference-only checkpoints: the same files from both builds, each decoding the other's.
mkdir -p converted
for label in transformer tied; do
  for precision in int8 bf16; do
    for side in old new; do
      build=$old
      [ $side = new ] && build=$new
      "$build/tools/convert-checkpoint" --input "models/$label/checkpoint_last.pt" --precision "$precision" \
        --output "converted/$label.$precision.$side.pt" 2>/dev/null
    done
    if ! same_format "converted/$label.$precision.old.pt" "converted/$label.$precision.new.pt"; then
      # A build that writes another format (3 after 2): each decodes its own file alike.
      decode_each "$label.$precision.converted-by-each" "converted/$label.$precision.old.pt" \
        "converted/$label.$precision.new.pt" --data data-bin --shortlist shortlist.txt
      continue
    fi
    if ! cmp -s "converted/$label.$precision.old.pt" "converted/$label.$precision.new.pt"; then
      echo "convert-checkpoint $label $precision: the files differ"
      status=1
    fi
    decode "$label.$precision.converted-by-old" "converted/$label.$precision.old.pt" --data data-bin
    decode "$label.$precision.converted-by-new" "converted/$label.$precision.new.pt" --data data-bin \
      --shortlist shortlist.txt
  done
done
"$old/tools/convert-checkpoint" --input "$t" --precision int8 --output converted/skip.old.pt \
  --quantize-skip decoder.output_projection 2>/dev/null
"$new/tools/convert-checkpoint" --input "$t" --precision int8 --output converted/skip.new.pt \
  --quantize-skip decoder.output_projection 2>/dev/null
if same_format converted/skip.old.pt converted/skip.new.pt; then
  cmp -s converted/skip.old.pt converted/skip.new.pt || { echo "convert-checkpoint --quantize-skip: the files differ"; status=1; }
  decode skip.converted "converted/skip.new.pt" --data data-bin
else
  decode_each skip.converted-by-each converted/skip.old.pt converted/skip.new.pt --data data-bin
fi

[ $status = 0 ] && echo "check-same-decoding: $checked decodings identical ($(grep -c '^H-' out/new/transformer.int8) hypotheses each on the toy test set), inference checkpoints byte-identical or decoding alike"
exit $status
