#!/usr/bin/env bash
# CCN vs Transformer (Li & Jiang 2020, Table 1, in a small setting) in one command: the
# same recipe, seed and batches for both, the paper's pre-norm bias-free setup, only
# model.arch differs. Preprocesses, trains the two, translates valid and test (beam 5),
# scores BLEU and chrF2 with csan-score and its paired bootstrap against the Transformer,
# and writes OUT/results.md (parameters, time per update, valid/test BLEU and chrF2,
# p-values) and, when Debian's python3-matplotlib is installed, OUT/curves.png and
# OUT/test-significance.png (tools/plot-curves).
#
#   tools/experiments/ccn-vs-transformer.sh [--quick] [--out DIR] [--build DIR] [--data DIR] [--seed N]
#          [--jobs N] [--precision P] [--no-valid-bleu] [--systems A,B | --report-only]
#
# full     Multi30k En->De (--data, default ../shared/data/multi30k), recipes/multi30k-small.yaml
#          (d 256, FFN 1024, 4 heads, 3 + 3 layers, joint 8k SentencePiece, 4,000 updates) with
#          pre-norm and bias-free attention for both; --arch ccn for CCN. Several hours on
#          2 CPU cores (docs/experiments.md, "Expected times").
# --quick  the built-in toy corpus (1,000 pairs), recipes/ccn-tiny.yaml (ccn_tiny; the
#          Transformer: --arch transformer_tiny), 80 updates: under a minute; checks the
#          pipeline, not the paper (ctest runs it).
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
experiment=ccn-vs-transformer
source "$(dirname "$0")/common.sh"
experiment_options "$@"

if ((quick)); then
  toy_corpus
  corpus="toy corpus (quick check)" recipe=$root/recipes/ccn-tiny.yaml spm_vocab=200
  train_args=(--max-update 80 --log-interval 10 --set dataset.validate_interval_updates=40 --set dataset.max_tokens=1024
              --set lr_scheduler.warmup_updates=20 --set task.eval_bleu_beam=1 --set checkpoint.no_epoch_checkpoints=true)
  transformer=(--arch transformer_tiny) ccn=()
  setting="Quick check (--quick): the built-in toy corpus (1,000 training pairs), recipes/ccn-tiny.yaml (d 64, FFN 256, 4 heads, 2 + 2 pre-norm layers, attention without biases), 80 updates of 1,024 tokens, seed $seed; ccn_tiny against transformer_tiny with the same settings. Numbers say nothing about the paper."
else
  multi30k_corpus
  corpus="Multi30k En→De" recipe=$root/recipes/multi30k-small.yaml spm_vocab=8000
  train_args=(--set model.normalize_before=true --set model.attn_bias=false)
  transformer=() ccn=(--arch ccn)
  setting="Multi30k En→De (29,000 / 1,014 / 1,000 pairs: train / val / test2016), joint 8k SentencePiece vocabulary, recipes/multi30k-small.yaml (d 256, FFN 1024, 4 heads, 3 + 3 layers, dropout 0.3, 4,096 tokens per batch, 4,000 updates) in the paper's setup (pre-norm with final layer norms, attention without biases), seed $seed, beam 5, checkpoint with the lowest validation loss. CCN: crossed gates of Fig. 2, two tokens swapped per sentence and branch with probability 0.5 in training."
fi
preprocess $spm_vocab

run_system Transformer transformer "${train_args[@]}" ${transformer[@]+"${transformer[@]}"}
run_system CCN ccn "${train_args[@]}" ${ccn[@]+"${ccn[@]}"}

finish_systems

report "CCN vs Transformer (Li & Jiang 2020), $corpus" "CCN vs Transformer, $corpus (seed $seed)" "$setting" \
  Transformer=transformer CCN=ccn
