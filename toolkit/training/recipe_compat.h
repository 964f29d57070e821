// Resuming from a checkpoint with a recipe that may have changed since it was written.
// As in fairseq, schedule and bookkeeping keys (max_update, lr, save_dir, ...) may
// change, and the run says which did; keys that define the model or the data it reads
// (model.*, the language pair, the dictionaries, the SentencePiece model) may not,
// because the saved weights and optimizer state only fit the model that wrote them.
#pragma once

#include <string>
#include <vector>

#include "toolkit/core/config.h"
#include "toolkit/training/checkpoint.h"

namespace csan::training {

struct RecipeChange {
  std::string key;
  std::string saved, current;  // values as YAML text ("(none)": no value)
};

// Keys whose values differ between two resolved recipes over the same schema.
std::vector<RecipeChange> recipe_changes(const core::Config& saved, const core::Config& current);

// True for keys the checkpoint's model or data depend on (model.*).
bool defines_model(const std::string& key);

// Compares the run about to resume (its resolved recipe and the meta it would write)
// with checkpoint `saved` read from `checkpoint_path`. Throws a one-line csan::Error
// naming the key (or file), both values and the checkpoint for a change of the model
// or the data; returns the other changes ("key saved -> current, ..."), "" when none.
// `data_dir` names the dictionaries in errors.
std::string check_resume_compatible(const core::Config& current, const CheckpointMeta& current_meta,
                                    const CheckpointMeta& saved, const std::string& checkpoint_path,
                                    const std::string& data_dir);

}  // namespace csan::training
