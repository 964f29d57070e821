#!/usr/bin/env bash
# CSAN Table 2 (Yang et al., NAACL 2019) in one command, on Multi30k En->De: Transformer
# vs 1-D CSAN vs 2-D CSAN with the same recipe and seed. Preprocesses, trains the three,
# translates valid and test (beam 5), scores BLEU and chrF2 with csan-score and its
# paired bootstrap against the Transformer, and writes OUT/results.md (parameters, time
# per update, valid/test BLEU and chrF2, p-values) and, when Debian's python3-matplotlib
# is installed, OUT/curves.png and OUT/test-significance.png (tools/plot-curves).
#
#   tools/experiments/csan-table2.sh [--quick] [--out DIR] [--build DIR] [--data DIR] [--seed N]
#          [--jobs N] [--precision P] [--no-valid-bleu] [--systems A,B | --report-only]
#
# full     recipes/multi30k-small.yaml (d 256, 3 + 3 layers, joint 8k SentencePiece),
#          4,000 updates per system; CSAN: window 11 (M+1), 1 or 3 heads (N+1), in encoder
#          layers 0 and 1. Hours on 2 CPU cores (docs/experiments.md, "Expected times").
# --quick  the built-in toy corpus (1,000 pairs) and the tiny recipe, 80 updates: under a
#          minute; checks the pipeline, not the paper (ctest runs it).
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
experiment=csan-table2
source "$(dirname "$0")/common.sh"
experiment_options "$@"

if ((quick)); then
  toy_corpus
  corpus="toy corpus (quick check)" recipe=$root/recipes/tiny-transformer.yaml spm_vocab=200
  train_args=(--max-update 80 --log-interval 10 --set dataset.validate_interval_updates=40 --set dataset.max_tokens=1024
              --set lr_scheduler.warmup_updates=20 --set task.eval_bleu_beam=1 --set checkpoint.no_epoch_checkpoints=true)
  csan1d=(--arch csan1d_tiny) csan2d=(--arch csan2d_tiny)
  setting="Quick check (--quick): the built-in toy corpus (1,000 training pairs), recipes/tiny-transformer.yaml, 80 updates of 1,024 tokens, seed $seed; csan1d_tiny / csan2d_tiny (window 11, 1 / 3 heads, encoder layer 0). Numbers say nothing about the paper."
else
  multi30k_corpus
  corpus="Multi30k En→De" recipe=$root/recipes/multi30k-small.yaml spm_vocab=8000
  train_args=()
  csan_common=(--arch csan --set model.csan.window=11 --set "model.csan.encoder_layers=[0,1]")
  csan1d=("${csan_common[@]}" --set model.csan.head_window=1) csan2d=("${csan_common[@]}" --set model.csan.head_window=3)
  setting="Multi30k En→De (29,000 / 1,014 / 1,000 pairs: train / val / test2016), joint 8k SentencePiece vocabulary, recipes/multi30k-small.yaml (d 256, FFN 1024, 4 heads, 3 + 3 layers, dropout 0.3, 4,096 tokens per batch, 4,000 updates), seed $seed, beam 5, checkpoint with the lowest validation loss. CSAN: window 11, 1 head (1-D) or 3 heads (2-D), encoder layers 0 and 1; parameter-free."
fi
preprocess $spm_vocab

run_system Transformer transformer ${train_args[@]+"${train_args[@]}"}
run_system CSAN-1D csan1d ${train_args[@]+"${train_args[@]}"} "${csan1d[@]}"
run_system CSAN-2D csan2d ${train_args[@]+"${train_args[@]}"} "${csan2d[@]}"

finish_systems

report "CSAN Table 2: Transformer vs CSAN-1D vs CSAN-2D, $corpus" \
  "CSAN Table 2, $corpus: Transformer vs CSAN-1D vs CSAN-2D (seed $seed)" "$setting" \
  Transformer=transformer CSAN-1D=csan1d CSAN-2D=csan2d
