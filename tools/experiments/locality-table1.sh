#!/usr/bin/env bash
# CSAN Table 1 (Yang et al., NAACL 2019) in one command, on Multi30k En->De: the Transformer,
# the seven locality baselines the paper re-implemented (BI_DIRECT, REL_POS, NEIGHBOR,
# LOCAL_HARD, LOCAL_SOFT, BLOCK, CNNs) and 2-D CSAN, with the same recipe and seed.
# Preprocesses, trains the nine, translates valid and test (beam 5), scores BLEU and chrF2
# with csan-score and its paired bootstrap against the Transformer, and writes
# OUT/results.md (parameters and those added, time per update and speed against the
# Transformer, valid/test BLEU and chrF2, p-values, and Table 1's parameters, speed and
# BLEU beside them) and, when Debian's python3-matplotlib is installed, OUT/curves.png and
# OUT/test-significance.png (tools/plot-curves).
#
#   tools/experiments/locality-table1.sh [--quick] [--out DIR] [--build DIR] [--data DIR] [--seed N]
#          [--jobs N] [--precision P] [--no-valid-bleu] [--systems A,B | --report-only]
#
# full     recipes/multi30k-small.yaml (d 256, 4 heads, 3 + 3 layers, joint 8k SentencePiece),
#          4,000 updates per system. Each method where its preset puts it, scaled to 3
#          layers: encoder layers 0 and 1 (as csan-table2.sh's CSAN) for BI_DIRECT, NEIGHBOR,
#          LOCAL_HARD (2 of 4 heads local), LOCAL_SOFT, CNNs and CSAN-2D; every attention for
#          REL_POS; every encoder layer for BLOCK. About a day on 2 CPU cores (docs/experiments.md,
#          "Expected times").
# --quick  the built-in toy corpus (1,000 pairs) and the tiny recipe, 40 updates each:
#          under a minute; checks the pipeline, not the paper (ctest runs it).
# --jobs N   up to N systems train at once (on a GPU machine; on a CPU each gets 1/N of
#            the cores); --precision P (fp32, fp16, amp, bf16) is given to csan-train.
# --no-valid-bleu  validations without BLEU (losses only: the same checkpoints, tested; on a
#            GPU the BLEU was most of a run's time).
# --systems A,B   only those systems train and translate (no table); --report-only trains
#            nothing and writes the table from the outputs already in OUT (systems trained on
#            other machines: their save dirs' logs, metrics.jsonl, run.json, and hyp/).
# Rerunning continues: data and finished steps are kept, training resumes from
# checkpoint_last.pt. Only the executables' command lines are used.
set -euo pipefail
experiment=locality-table1
source "$(dirname "$0")/common.sh"
experiment_options "$@"

systems=(Transformer BI_DIRECT REL_POS NEIGHBOR LOCAL_HARD LOCAL_SOFT BLOCK CNNs CSAN-2D)
declare -A dirs=([Transformer]=transformer [BI_DIRECT]=bi_direct [REL_POS]=rel_pos [NEIGHBOR]=neighbor
                 [LOCAL_HARD]=local_hard [LOCAL_SOFT]=local_soft [BLOCK]=block [CNNs]=cnns [CSAN-2D]=csan2d)
# The settings of one system: model.attention chains and the entry's keys (the presets'
# choices, on the recipe's model).
settings() {
  local method=$1 lowest=$2 all=$3 half_heads=$4
  case $method in
    transformer) ;;
    csan2d) echo "${csan_arch[@]}" --set model.csan.window=11 --set model.csan.head_window=3 \
              --set "model.csan.encoder_layers=$lowest" ;;
    rel_pos) echo --set "model.attention.encoder.self=[rel_pos]" --set "model.attention.decoder.self=[rel_pos]" \
               --set "model.attention.decoder.cross=[rel_pos]" --set model.rel_pos.clip=16 \
               --set "model.rel_pos.encoder_layers=$all" --set "model.rel_pos.decoder_layers=$all" \
               --set "model.rel_pos.cross_layers=$all" ;;
    block) echo --set "model.attention.encoder.self=[block]" --set model.block.size=4 --set "model.block.encoder_layers=$all" ;;
    local_hard) echo --set "model.attention.encoder.self=[local_hard]" --set model.local_hard.window=10 \
                  --set model.local_hard.global_heads=$half_heads --set "model.local_hard.encoder_layers=$lowest" ;;
    *) echo --set "model.attention.encoder.self=[$method]" --set "model.$method.encoder_layers=$lowest" ;;
  esac
}
if ((quick)); then
  toy_corpus 60 60
  corpus="toy corpus (quick check)" recipe=$root/recipes/tiny-transformer.yaml spm_vocab=200
  train_args=(--max-update 40 --log-interval 10 --set dataset.validate_interval_updates=20 --set dataset.max_tokens=1024
              --set lr_scheduler.warmup_updates=20
              --set task.eval_bleu_beam=1 --set checkpoint.no_epoch_checkpoints=true)
  layers=("[0]" "[0,1]" 2)  # the lowest-three methods' layers, every layer, LOCAL_HARD's global heads
  csan_arch=(--arch csan2d_tiny)
  beam=2
  setting="Quick check (--quick): the built-in toy corpus (1,000 training pairs), recipes/tiny-transformer.yaml (2 + 2 layers, 4 heads), 40 updates of 1,024 tokens, seed $seed, beam $beam; the methods in encoder layer 0, REL_POS everywhere, BLOCK in both encoder layers. Numbers say nothing about the paper."
else
  multi30k_corpus
  corpus="Multi30k En→De" recipe=$root/recipes/multi30k-small.yaml spm_vocab=8000
  train_args=()
  layers=("[0,1]" "[0,1,2]" 2)
  csan_arch=(--arch csan)  # the recipe's sizes with CSAN's entry
  setting="Multi30k En→De (29,000 / 1,014 / 1,000 pairs: train / val / test2016), joint 8k SentencePiece vocabulary, recipes/multi30k-small.yaml (d 256, FFN 1024, 4 heads, 3 + 3 layers, dropout 0.3, 4,096 tokens per batch, 4,000 updates), seed $seed, beam $beam, checkpoint with the lowest validation loss. BI_DIRECT, NEIGHBOR, LOCAL_HARD (window 10, 2 of 4 heads local), LOCAL_SOFT, CNNs (4 convolutions of kernel 7) and CSAN-2D (11 positions x 3 heads) in encoder layers 0 and 1; REL_POS (k 16) in every attention; BLOCK (blocks of 4) in every encoder layer."
fi
preprocess $spm_vocab

for name in "${systems[@]}"; do
  read -r -a system_args <<< "$(settings "${dirs[$name]}" "${layers[@]}")"
  run_system "$name" "${dirs[$name]}" ${train_args[@]+"${train_args[@]}"} ${system_args[@]+"${system_args[@]}"}
done
finish_systems

# Table 1 of the paper (WMT14 En->De, Transformer-Base, 8 P40 GPUs): parameters, speed in
# steps per second (and relative to the Transformer's 1.28), BLEU (and its gain).
cat > table1.json <<'JSON'
{"columns": ["Table 1: parameters", "Table 1: speed", "Table 1: BLEU"],
 "rows": {"Transformer": ["88.0M", "1.28", "27.31"],
          "BI_DIRECT": ["+0.0M", "1.28 (1.00)", "27.58 (+0.27)"],
          "REL_POS": ["+0.1M", "1.17 (0.91)", "27.63 (+0.32)"],
          "NEIGHBOR": ["+0.4M", "1.22 (0.95)", "27.60 (+0.29)"],
          "LOCAL_HARD": ["+0.4M", "1.22 (0.95)", "27.73 (+0.42)"],
          "LOCAL_SOFT": ["+0.8M", "1.19 (0.93)", "27.81 (+0.50)"],
          "BLOCK": ["+6.0M", "0.95 (0.74)", "27.59 (+0.28)"],
          "CNNs": ["+42.6M", "0.74 (0.58)", "27.70 (+0.39)"],
          "CSAN-2D": ["+0.0M", "1.22 (0.95)", "28.18 (+0.87)"]}}
JSON
table_args=(--relative --paper-columns table1.json)
pairs=()
for name in "${systems[@]}"; do pairs+=("$name=${dirs[$name]}"); done
report "CSAN Table 1: the Transformer, seven locality baselines and 2-D CSAN, $corpus" \
  "CSAN Table 1, $corpus: Transformer, locality baselines, CSAN-2D (seed $seed)" "$setting" "${pairs[@]}"
