// How a run starts from a checkpoint (fairseq's CheckpointConfig): resuming it whole,
// resuming with parts reset (--reset-optimizer, --reset-lr-scheduler, --reset-dataloader,
// --reset-meters), or fine-tuning from its weights only (--finetune-from-model).
#pragma once

#include <string>

#include "toolkit/checkpoint/checkpoint.h"
#include "toolkit/core/config.h"

namespace csan::training {

struct RestartOptions {
  std::string finetune_from_model;  // "" when not fine-tuning
  bool reset_optimizer = false;     // fresh optimizer state; update count and schedule kept
  bool reset_lr_scheduler = false;  // the schedule restarts (warm-up) at the kept update count
  bool reset_dataloader = false;    // epoch 1, first batch
  bool reset_meters = false;        // no best validation score, patience count 0
};

// The checkpoint.* keys. Throws a one-line csan::Error naming the keys for
// finetune_from_model with restore_file or with a reset_* key (fine-tuning resets them all,
// as fairseq refuses the combination).
RestartOptions restart_options(const core::Config& cfg);

// What a run keeps of the checkpoint's progress `saved`.
checkpoint::TrainingProgress restart_progress(const checkpoint::TrainingProgress& saved, const RestartOptions& options);

// "reset optimizer, lr scheduler" for the log ("" when nothing is reset).
std::string describe_resets(const RestartOptions& options);

}  // namespace csan::training
