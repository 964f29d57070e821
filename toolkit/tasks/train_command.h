// csan-train after its options are parsed, as a library call shared by the executable
// and the Python package's csan.train: the recipe with its overrides, resolved; then the
// run (in this process, or csan-train's local data-parallel launch).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "toolkit/core/config.h"
#include "toolkit/training/train_log.h"

namespace csan::tasks {

// The flags csan-train has for the recipe keys everybody sets (csan.train's keyword
// arguments, with '_' for '-'); each sets one key.
struct TrainFlag {
  const char* name;
  const char* key;
  core::ValueType type;  // Bool (a switch that sets true), Int, Double or String
  const char* help;
};
const std::vector<TrainFlag>& train_flags();

// RECIPE (a YAML file), then `overrides` ("KEY=VALUE" as csan-train's --set reads them),
// then `settings` (its flags' keys and values), resolved (presets, defaults). Throws
// csan::Error naming the file, key or value.
core::Config training_recipe(const std::string& recipe, const std::vector<std::string>& overrides,
                             const std::vector<std::pair<std::string, core::Value>>& settings);

struct TrainInvocation {
  std::string command_line;              // recorded in SAVE_DIR/run.json and the checkpoints
  char** argv = nullptr;                 // the executable's own, to launch local workers; null: in-process only
  training::TrainLogCallback on_record;  // every metrics.jsonl record as it is written
};

// Trains on the resolved recipe (csan-train's exit status: 0, or 128 + signal after
// SIGINT/SIGTERM, a checkpoint saved). Throws csan::Error for a recipe without task.data,
// and, without argv (in-process), for any data-parallel run (world size > 1).
int train(const core::Config& cfg, const TrainInvocation& how);

}  // namespace csan::tasks
