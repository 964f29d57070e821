// Resuming from a checkpoint with a recipe that may have changed since it was written.
// As in fairseq, schedule and bookkeeping keys (max_update, lr, save_dir, ...) may
// change, and the run says which did; what defines the model or the data it reads (the
// task, model.*, the task's data such as dictionaries) may not, because the saved
// weights and optimizer state only fit the model that wrote them.
#pragma once

#include <string>
#include <vector>

#include "toolkit/checkpoint/checkpoint.h"
#include "toolkit/core/config.h"
#include "toolkit/training/task.h"

namespace csan::training {

struct RecipeChange {
  std::string key;
  std::string saved, current;  // values as YAML text ("(none)": no value)
};

// Keys whose values differ between two resolved recipes over the same schema.
std::vector<RecipeChange> recipe_changes(const core::Config& saved, const core::Config& current);

// True for keys the checkpoint's model depends on (model.*).
bool defines_model(const std::string& key);

// A value as it reads in a recipe ("[1, 2]", "'csan'", "0.1").
std::string value_text(const core::Value& value);

// Compares the run about to resume (its resolved recipe and task) with the checkpoint
// `saved` read from `checkpoint_path`. Throws a one-line csan::Error naming the task,
// key (or file), both values and the checkpoint for a change of the task, the model or
// the data; returns the other changes ("key saved -> current, ..."), "" when none.
std::string check_resume_compatible(const core::Config& current, const Task& task,
                                    const checkpoint::CheckpointMeta& saved, const std::string& checkpoint_path);

}  // namespace csan::training
