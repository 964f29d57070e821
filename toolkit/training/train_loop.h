// The whole of csan-train after option parsing and opening the task: builds
// model/criterion/optimizer/schedule from the resolved recipe, resumes from
// checkpoint_last.pt if present, and runs epochs of updates with validation, early
// stopping and checkpoints until max_epoch / max_update / patience / a stop signal.
// Task-agnostic: the task supplies data, batches, criterion and metrics.
#pragma once

#include "toolkit/core/config.h"
#include "toolkit/training/task.h"
#include "toolkit/training/train_log.h"

namespace csan::training {

// Exit status: 0 when training ended normally; 128 + signal after SIGINT/SIGTERM
// (a checkpoint was saved first, so rerunning the same command resumes).
// `command_line` is recorded in SAVE_DIR/run.json and the checkpoints; `on_record`, when
// set, gets every metrics.jsonl record as it is written (rank 0 only).
int run_training(const core::Config& cfg, Task& task, const std::string& command_line = "",
                 const TrainLogCallback& on_record = {});

}  // namespace csan::training
