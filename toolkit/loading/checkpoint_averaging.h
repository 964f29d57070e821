// fairseq's average_checkpoints: the element-wise mean of the weights of several
// checkpoints of one run, written as a new checkpoint that csan-generate reads like
// any other (recipe, dictionaries and progress of the first input; no optimizer state).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "toolkit/loading/model_loader.h"

namespace csan::loading {

// The newest `count` epoch checkpoints (checkpointN.pt) or, with by_updates, update
// checkpoints (checkpoint_E_U.pt) of `dir`, newest first; with upper_bound >= 0 only
// those with N (or U) <= upper_bound. Throws csan::Error if fewer than `count` exist.
std::vector<std::string> last_checkpoints(const std::string& dir, int64_t count, bool by_updates,
                                          int64_t upper_bound = -1);

// Averages `inputs` into `output` (written atomically). Throws csan::Error naming the
// file for a missing or corrupt input, or one of another task, model or vocabulary
// (schedule settings such as max_update may differ), a directory, and an output that is
// one of the inputs (checked before anything is loaded).
void average_checkpoints(const std::vector<std::string>& inputs, const std::string& output,
                         const DescribeModel& describe);

}  // namespace csan::loading
