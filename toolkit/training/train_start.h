// What a training run checks and opens before it logs anything, so that a bad start
// prints one line and leaves nothing behind: the checkpoint to resume from, the batch
// bounds, and (for csan-train's launcher) every check that needs no rank, device or peer.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "toolkit/checkpoint/checkpoint.h"
#include "toolkit/core/config.h"
#include "toolkit/training/restart_options.h"
#include "toolkit/training/task.h"

namespace csan::training {

// The checkpoint a run resumes from (checkpoint.restore_file as given, or relative to the
// save dir), opened and verified; else, with checkpoint.finetune_from_model, the checkpoint
// it fine-tunes; none when the default (checkpoint_last.pt) does not exist yet. As in
// fairseq, an existing SAVE_DIR/checkpoint_last.pt wins over finetune_from_model (the
// same command resumes a fine-tuning run). Throws csan::Error for a restore or fine-tuning
// file that does not exist, an inference-only checkpoint and a change of the task, model
// or data since the checkpoint.
// The checkpoint a run resumes from: checkpoint.restore_file as given, or relative to the
// save dir; none when the default (checkpoint_last.pt) does not exist yet. Throws
// csan::Error naming the key for a restore_file given that does not exist.
std::optional<std::string> restore_path(const core::Config& cfg, const std::string& save_dir);

struct ResumePoint {
  std::unique_ptr<checkpoint::CheckpointReader> reader;
  std::string recipe_changes;  // the other changes since the checkpoint ("" when none)
  RestartOptions restart;      // finetune_from_model is "" unless the run fine-tunes reader's
  std::string note;            // a line for the log ("" when none)
};
ResumePoint open_resume_point(const core::Config& cfg, const Task& task, const std::string& save_dir);

// A batch needs a bound: dataset.max_tokens or dataset.max_sentences.
void check_batch_bounds(const core::Config& cfg);

// Every check of run_training's start that each worker of a data-parallel run would
// repeat: the validation metric, the resume point, the batch bounds, the precision
// (fp16 and amp need a CUDA GPU), and the model, optimizer, schedule and criterion of the
// recipe built once on the CPU (then freed). csan-train runs it before it launches local
// workers, so that a recipe error is printed once, not once per worker. Throws the
// csan::Error a worker would.
void check_training_start(const core::Config& cfg, const Task& task);

}  // namespace csan::training
