// csan-train --reuse-dictionaries (checkpoint.reuse_dictionaries): fine-tuning or resuming
// on data binarized with other dictionaries or another SentencePiece model than the
// checkpoint's, by binarizing its raw text again with the checkpoint's (the task's
// TaskSpec::rebinarize_data) into SAVE_DIR/data-rebinarized.
#pragma once

#include "toolkit/core/config.h"

namespace csan::tasks {

inline constexpr const char* kRebinarizedDataDir = "data-rebinarized";

// The recipe to train with: `cfg` itself without checkpoint.reuse_dictionaries; else with
// task.data replaced by the data to train on, from the checkpoint the run starts from
// (restore_file when it exists, else finetune_from_model), with a line on stderr saying
// what was done. Throws a one-line csan::Error naming checkpoint.reuse_dictionaries when
// there is no checkpoint to take them from or the task has no dictionaries to reuse, and
// the errors of the checkpoint options and of the task's re-binarization.
core::Config with_reused_dictionaries(const core::Config& cfg);

}  // namespace csan::tasks
