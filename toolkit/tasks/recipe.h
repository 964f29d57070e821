// The whole recipe: the schema of every key (models, attention entries, tasks,
// training) and its resolution (the task's defaults, the arch preset, the attention
// entries' defaults), as csan-train, csan-generate's checkpoint loading, the benchmarks
// and the tests read recipes.
#pragma once

#include <memory>

#include "toolkit/checkpoint/checkpoint.h"
#include "toolkit/core/config.h"
#include "toolkit/loading/model_loader.h"
#include "toolkit/training/task.h"

namespace csan::tasks {

// Declares task.name (the registered tasks), every task's keys, every model key and
// every training key.
core::ConfigSchema recipe_schema();

// Resolves cfg for its task and arch: defaults fill what the recipe did not set. Throws
// csan::Error naming the key for an unknown task or arch and for a key that belongs to
// another task, arch or attention entry.
void resolve_recipe(core::Config& cfg);

// The resolved recipe a checkpoint embeds and the model context of its data, as its task
// reads them (loading::DescribeModel, for loading::load_model). Throws csan::Error naming
// `path` for a task this build does not have and a recipe of another task.
loading::ModelDescription describe_model(const checkpoint::CheckpointMeta& meta, const std::string& path);

// Opens the task of a resolved recipe on its task.data (training).
std::unique_ptr<training::Task> open_task(const core::Config& cfg);

}  // namespace csan::tasks
