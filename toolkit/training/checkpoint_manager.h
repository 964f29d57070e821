// fairseq's checkpoint policy: which files to write after an epoch or an update
// interval, and which old ones to delete.
//   checkpoint_last.pt         always
//   checkpointN.pt             at the end of epoch N (every save_interval epochs)
//   checkpoint_E_U.pt          every save_interval_updates updates
//   checkpoint_best.pt         when the validation metric improved
// The archive is written once (atomically) and the other names are hard links to it,
// each put in place by an atomic rename, so no name ever points at a partial file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "toolkit/core/config.h"

namespace csan::training {

struct CheckpointPolicy {
  std::string save_dir;
  int64_t save_interval = 1;
  int64_t save_interval_updates = 0;
  int64_t keep_interval_updates = -1;
  int64_t keep_last_epochs = -1;
  bool no_epoch_checkpoints = false;
};

// The checkpoint.* keys of a recipe.
CheckpointPolicy checkpoint_policy(const core::Config& cfg);

// The file names (without directory) to write for this moment.
std::vector<std::string> checkpoint_names(const CheckpointPolicy& policy, int64_t epoch, int64_t num_updates,
                                          bool end_of_epoch, bool improved_best);

// Writes `written` (already complete, in save_dir) under every other name of `names`.
void link_checkpoint_copies(const std::string& save_dir, const std::string& written,
                            const std::vector<std::string>& names);

// Deletes epoch and update checkpoints beyond the newest keep_* of each kind.
void prune_checkpoints(const CheckpointPolicy& policy);

}  // namespace csan::training
