#include "toolkit/tasks/train_command.h"

#include "toolkit/core/error.h"
#include "toolkit/tasks/recipe.h"
#include "toolkit/tasks/reused_dictionaries.h"
#include "toolkit/training/distributed_launcher.h"
#include "toolkit/training/distributed_setup.h"
#include "toolkit/training/train_loop.h"
#include "toolkit/training/train_start.h"

namespace csan::tasks {

using core::ValueType;

const std::vector<TrainFlag>& train_flags() {
  static const std::vector<TrainFlag> flags{
      {"data", "task.data", ValueType::String, "directory written by csan-preprocess"},
      {"save-dir", "checkpoint.save_dir", ValueType::String, "where checkpoints, metrics.jsonl go"},
      {"restore-file", "checkpoint.restore_file", ValueType::String,
       "checkpoint to resume from (default: SAVE_DIR/checkpoint_last.pt)"},
      {"source-lang", "task.source_lang", ValueType::String, "source language suffix"},
      {"target-lang", "task.target_lang", ValueType::String, "target language suffix"},
      {"lang-pairs", "task.lang_pairs", ValueType::String, "language pairs of a multilingual model (en-de,de-en)"},
      {"lang-tok-style", "task.lang_tok_style", ValueType::String,
       "where a multilingual model's target-language token goes: encoder or decoder"},
      {"sampling-temperature", "task.sampling_temperature", ValueType::Double,
       "temperature sampling across a multilingual model's pairs (1: as the data)"},
      {"arch", "model.arch", ValueType::String, "architecture or preset (transformer_tiny, transformer_base, ...)"},
      {"distributed-init-method", "distributed_training.distributed_init_method", ValueType::String,
       "tcp://HOST:PORT of rank 0, or env://"},
      {"distributed-backend", "distributed_training.distributed_backend", ValueType::String,
       "gloo (CPU), nccl (CUDA) or auto"},
      {"precision", "common.precision", ValueType::String,
       "fp32 (default), bf16 (autocast), fp16 or amp (CUDA, loss scaling)"},
      {"tensorboard-logdir", "common.tensorboard_logdir", ValueType::String,
       "also write TensorBoard scalars here (one run per split)"},
      {"max-update", "optimization.max_update", ValueType::Int, "stop after N updates"},
      {"max-epoch", "optimization.max_epoch", ValueType::Int, "stop after epoch N"},
      {"seed", "common.seed", ValueType::Int, "random seed"},
      {"max-tokens", "dataset.max_tokens", ValueType::Int, "max padded tokens per batch"},
      {"max-sentences", "dataset.max_sentences", ValueType::Int, "max sentences per batch"},
      {"update-freq", "optimization.update_freq", ValueType::Int, "micro-batches per update"},
      {"patience", "optimization.patience", ValueType::Int, "early stopping after N validations without improvement"},
      {"save-interval-updates", "checkpoint.save_interval_updates", ValueType::Int, "checkpoint every N updates"},
      {"validate-interval-updates", "dataset.validate_interval_updates", ValueType::Int, "validate every N updates"},
      {"log-interval", "common.log_interval", ValueType::Int, "updates between log lines"},
      {"threads", "common.threads", ValueType::Int,
       "CPU threads per worker (0: OMP_NUM_THREADS, else every usable CPU)"},
      {"distributed-world-size", "distributed_training.distributed_world_size", ValueType::Int,
       "workers in all; alone (no rank, RANK or Slurm task) it launches N local workers"},
      {"distributed-rank", "distributed_training.distributed_rank", ValueType::Int,
       "this worker's rank (with --distributed-init-method)"},
      {"distributed-port", "distributed_training.distributed_port", ValueType::Int,
       "rendezvous port (Slurm; local launch)"},
      {"device-id", "distributed_training.device_id", ValueType::Int, "local rank / CUDA device of this worker"},
      {"fp16-scale-window", "common.fp16_scale_window", ValueType::Int, "clean updates before the loss scale doubles"},
      {"lr", "optimization.lr", ValueType::Double, "peak learning rate"},
      {"clip-norm", "optimization.clip_norm", ValueType::Double, "gradient clipping norm"},
      {"distributed-timeout", "distributed_training.distributed_timeout", ValueType::Double,
       "seconds before a missing or hung worker is an error (default 300)"},
      {"bucket-cap-mb", "distributed_training.bucket_cap_mb", ValueType::Double,
       "gradient all-reduce bucket size in MB (default 25)"},
      {"fp16-init-scale", "common.fp16_init_scale", ValueType::Double, "initial loss scale (fp16, amp)"},
      {"fp16-scale-tolerance", "common.fp16_scale_tolerance", ValueType::Double,
       "overflow share tolerated before halving the scale"},
      {"min-loss-scale", "common.min_loss_scale", ValueType::Double, "stop when the loss scale falls to this"},
      {"threshold-loss-scale", "common.threshold_loss_scale", ValueType::Double,
       "the loss scale never drops below this"},
      {"finetune-from-model", "checkpoint.finetune_from_model", ValueType::String,
       "start from this checkpoint's weights only (fresh optimizer, schedule, meters, data position); "
       "SAVE_DIR/checkpoint_last.pt, once there, is resumed instead"},
      {"reuse-dictionaries", "checkpoint.reuse_dictionaries", ValueType::Bool,
       "train on --data re-binarized with the dictionaries and SentencePiece model of the checkpoint the run "
       "starts from (--finetune-from-model, --restore-file), into SAVE_DIR/data-rebinarized"},
      {"reset-optimizer", "checkpoint.reset_optimizer", ValueType::Bool,
       "resume without the checkpoint's optimizer state (update count and schedule kept)"},
      {"reset-lr-scheduler", "checkpoint.reset_lr_scheduler", ValueType::Bool,
       "resume with the lr schedule restarted (warm-up again) at the checkpoint's update count"},
      {"reset-dataloader", "checkpoint.reset_dataloader", ValueType::Bool, "resume at the start of epoch 1"},
      {"reset-meters", "checkpoint.reset_meters", ValueType::Bool,
       "resume without the best validation score and patience count"},
      {"store-ema", "ema.store_ema", ValueType::Bool,
       "keep an exponential moving average of the weights in the checkpoints"},
      {"ema-decay", "ema.ema_decay", ValueType::Double, "EMA decay in (0, 1] (default 0.9999)"},
      {"ema-start-update", "ema.ema_start_update", ValueType::Int, "the EMA copies the weights until this update"},
      {"ema-update-freq", "ema.ema_update_freq", ValueType::Int, "update the EMA every N updates"},
      {"validate-with-ema", "ema.validate_with_ema", ValueType::Bool,
       "validate and choose checkpoint_best.pt with the EMA weights"},
      {"ema-seed-model", "ema.ema_seed_model", ValueType::String,
       "start the EMA as this checkpoint's EMA weights (unless it is resumed with the run's checkpoint)"},
  };
  return flags;
}

core::Config training_recipe(const std::string& recipe, const std::vector<std::string>& overrides,
                             const std::vector<std::pair<std::string, core::Value>>& settings) {
  core::Config cfg(recipe_schema());
  cfg.load_file(recipe);
  for (const auto& assignment : overrides) cfg.apply_override(assignment);
  for (const auto& [key, value] : settings) cfg.set(key, value);
  resolve_recipe(cfg);
  return cfg;
}

int train(const core::Config& recipe, const TrainInvocation& how) {
  if (!recipe.has("task.data"))
    throw Error("missing --data DIR (the output directory of csan-preprocess)", ErrorKind::bad_option);
  const auto distributed = training::resolve_distributed_setup(recipe);
  if (!how.argv && distributed.world_size > 1)
    throw Error("distributed_training.distributed_world_size " + std::to_string(distributed.world_size) + " (" +
                    distributed.source + "): data-parallel training runs in csan-train only, not in-process",
                ErrorKind::bad_option);
  // Before local workers launch, so that they find the data complete.
  const core::Config cfg = with_reused_dictionaries(recipe);
  if (distributed.launch_local_workers) {
    // Checked here once: every worker would print the same error.
    training::check_training_start(cfg, *open_task(cfg));
    return training::launch_local_workers(distributed, how.argv);
  }
  const auto task = open_task(cfg);
  return training::run_training(cfg, *task, how.command_line, how.on_record);
}

}  // namespace csan::tasks
