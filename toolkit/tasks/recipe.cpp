#include "toolkit/tasks/recipe.h"

#include <set>

#include "toolkit/commands/task_command.h"
#include "toolkit/core/error.h"
#include "toolkit/models/model_registry.h"
#include "toolkit/tasks/task_registry.h"
#include "toolkit/training/training_options.h"

namespace csan::tasks {

namespace {

// The keys every task has (declared with the training keys).
const std::set<std::string> kCommonTaskKeys = {"task.name", "task.data", "task.train_subset", "task.valid_subset"};

std::set<std::string> declared_keys(const std::function<void(core::ConfigSchema&)>& declare) {
  core::ConfigSchema scratch;
  declare(scratch);
  std::set<std::string> keys;
  for (const auto& [key, spec] : scratch.specs()) keys.insert(key);
  return keys;
}

}  // namespace

core::ConfigSchema recipe_schema() {
  core::ConfigSchema schema;
  schema.add_string("task.name", commands::kDefaultTask, "the task: what the data is and what is learned from it",
                    task_registry().names());
  for (const auto& name : task_registry().names()) task_registry().get(name).declare_options(schema);
  models::declare_model_options(schema);
  training::declare_training_options(schema);
  return schema;
}

void resolve_recipe(core::Config& cfg) {
  const std::string name = cfg.get<std::string>("task.name");
  const TaskSpec& task = task_registry().get(name);
  for (const auto& [key, value] : task.defaults()) cfg.set_default(key, value);
  const auto owned = declared_keys(task.declare_options);
  for (const auto& [key, value] : cfg.explicit_values()) {
    if (key.rfind("task.", 0) != 0 || owned.count(key) || kCommonTaskKeys.count(key)) continue;
    std::string owners;
    for (const auto& other : task_registry().names())
      if (declared_keys(task_registry().get(other).declare_options).count(key))
        owners += (owners.empty() ? "" : ", ") + other;
    throw Error::for_key(key, "is not a key of task " + name +
                                  (owners.empty() ? std::string() : " (it belongs to task " + owners + ")"));
  }
  models::resolve_model_options(cfg);
}

loading::ModelDescription describe_model(const checkpoint::CheckpointMeta& meta, const std::string& path) {
  if (!task_registry().contains(meta.task))
    throw Error(path + ": written by task '" + meta.task +
                "', which this csan does not have (known: " + task_registry().known() + ")");
  core::Config cfg = core::Config::from_yaml_string(meta.recipe_yaml, recipe_schema(), path + " (embedded recipe)");
  if (cfg.get<std::string>("task.name") != meta.task)
    throw Error(path + ": its recipe names task '" + cfg.get<std::string>("task.name") + "' but the checkpoint says '" +
                meta.task + "' (corrupt checkpoint?)");
  resolve_recipe(cfg);
  models::ModelContext context = task_registry().get(meta.task).model_context(meta, path);
  return {std::move(cfg), std::move(context)};
}

std::unique_ptr<training::Task> open_task(const core::Config& cfg) {
  return task_registry().get(cfg.get<std::string>("task.name")).open(cfg);
}

}  // namespace csan::tasks
