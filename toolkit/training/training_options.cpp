#include "toolkit/training/training_options.h"

#include "toolkit/training/criterion.h"
#include "toolkit/training/distributed_setup.h"
#include "toolkit/training/lr_scheduler.h"
#include "toolkit/training/optimizer.h"
#include "toolkit/training/precision.h"
#include "toolkit/training/weights_ema.h"

namespace csan::training {

void declare_training_options(core::ConfigSchema& s) {
  s.add_string("task.data", std::nullopt, "directory written by csan-preprocess");
  s.add_string("task.train_subset", "train", "training split name");
  s.add_string("task.valid_subset", "valid", "validation split name");

  s.add_int("dataset.max_tokens", 4096, "max padded tokens per batch (0: no limit)", 0);
  s.add_int("dataset.max_sentences", 0, "max sentences per batch (0: no limit)", 0);
  s.add_int("dataset.required_batch_size_multiple", 1, "batch sizes are rounded to a multiple of this", 1);
  s.add_int("dataset.max_tokens_valid", 0, "max tokens per validation batch (0: same as max_tokens)", 0);
  s.add_int("dataset.validate_interval", 1, "validate every N epochs", 1);
  s.add_int("dataset.validate_interval_updates", 0, "also validate every N updates (0: off)", 0);
  s.add_bool("dataset.disable_validation", false, "never validate");

  s.add_double("optimization.lr", 5e-4, "peak learning rate", 0.0, kMaxFloatOption);
  s.add_int("optimization.max_epoch", 0, "stop after this epoch (0: no limit)", 0);
  s.add_int("optimization.max_update", 0, "stop after this many updates (0: no limit)", 0);
  s.add_int("optimization.update_freq", 1, "micro-batches accumulated per update", 1);
  s.add_double("optimization.clip_norm", 0.0, "clip gradients to this L2 norm (0: off)", 0.0, kMaxFloatOption);
  s.add_int("optimization.patience", -1, "stop after N validations without improvement (-1: off)", -1);

  s.add_string("checkpoint.save_dir", "checkpoints", "where checkpoints and logs go");
  s.add_string("checkpoint.restore_file", "checkpoint_last.pt",
               "checkpoint to resume from (relative to save_dir), if it exists");
  s.add_int("checkpoint.save_interval", 1, "save checkpointN.pt every N epochs", 1);
  s.add_int("checkpoint.save_interval_updates", 0, "save checkpoint_E_U.pt every N updates (0: off)", 0);
  s.add_int("checkpoint.keep_interval_updates", -1, "keep only the last N update checkpoints (-1: all)", -1);
  s.add_int("checkpoint.keep_last_epochs", -1, "keep only the last N epoch checkpoints (-1: all)", -1);
  s.add_bool("checkpoint.no_epoch_checkpoints", false, "do not write checkpointN.pt");
  s.add_bool("checkpoint.no_save", false, "write no checkpoints at all");
  s.add_string("checkpoint.best_checkpoint_metric", "loss",
               "validation metric that selects checkpoint_best.pt and drives patience: loss, nll_loss, or one "
               "the task reports (bleu with task.eval_bleu)");
  s.add_bool("checkpoint.maximize_best_checkpoint_metric", false,
             "higher is better (implied for metrics such as bleu and accuracy)");
  s.add_string("checkpoint.finetune_from_model", "",
               "start from this checkpoint's weights only (fresh optimizer, schedule, meters, data position); "
               "ignored once save_dir has checkpoint_last.pt, which the run resumes instead (\"\": off)");
  s.add_bool("checkpoint.reuse_dictionaries", false,
             "when task.data's dictionaries or SentencePiece model differ from those of the checkpoint the run "
             "starts from (finetune_from_model, restore_file), re-binarize its raw text with the checkpoint's into "
             "save_dir/data-rebinarized and train on that");
  s.add_bool("checkpoint.reset_optimizer", false, "resume without the checkpoint's optimizer state");
  s.add_bool("checkpoint.reset_lr_scheduler", false,
             "resume with the learning-rate schedule restarted (warm-up again) at the checkpoint's update count");
  s.add_bool("checkpoint.reset_dataloader", false, "resume at the start of epoch 1 of the data");
  s.add_bool("checkpoint.reset_meters", false,
             "resume without the checkpoint's best validation score and patience count");

  s.add_int("common.seed", 1, "random seed (weights, dropout, batch order)", 0);
  s.add_bool("common.cpu", false, "train on the CPU even when a CUDA GPU is available (fairseq's --cpu)");
  s.add_int("common.threads", 0,
            "CPU threads of LibTorch's operators, per worker (0: OMP_NUM_THREADS when set, else every usable CPU)", 0);
  s.add_int("common.log_interval", 100, "updates between plain log lines", 1);
  s.add_string("common.tensorboard_logdir", "",
               "also write TensorBoard scalars here, one run per split (fairseq's --tensorboard-logdir; \"\": none)");
  declare_precision_options(s);
  declare_ema_options(s);

  declare_criterion_options(s);
  declare_optimizer_options(s);
  declare_lr_scheduler_options(s);
  declare_distributed_options(s);
}

}  // namespace csan::training
