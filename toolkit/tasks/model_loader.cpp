#include "toolkit/tasks/model_loader.h"

#include "toolkit/core/error.h"
#include "toolkit/models/model_registry.h"
#include "toolkit/nn/init.h"
#include "toolkit/tasks/inference_checkpoint.h"
#include "toolkit/tasks/recipe.h"
#include "toolkit/tasks/task_registry.h"

namespace csan::tasks {

LoadedModel load_model(checkpoint::CheckpointReader& reader, const torch::Device& device) {
  const auto& meta = reader.meta();
  if (!task_registry().contains(meta.task))
    throw Error(reader.path() + ": written by task '" + meta.task +
                "', which this csan does not have (known: " + task_registry().known() + ")");
  core::Config cfg =
      core::Config::from_yaml_string(meta.recipe_yaml, recipe_schema(), reader.path() + " (embedded recipe)");
  if (cfg.get<std::string>("task.name") != meta.task)
    throw Error(reader.path() + ": its recipe names task '" + cfg.get<std::string>("task.name") +
                "' but the checkpoint says '" + meta.task + "' (corrupt checkpoint?)");
  resolve_recipe(cfg);
  models::ModelContext context = task_registry().get(meta.task).model_context(meta, reader.path());
  std::shared_ptr<models::Model> model;
  {
    nn::SkipInitialization skip;  // the checkpoint overwrites every weight
    model = models::build_model(cfg, context);
  }
  model->to(device);
  // An inference-only checkpoint (convert-checkpoint) stores converted projections.
  prepare_for_inference_checkpoint(*model, reader);
  reader.load_model(*model, /*adopt=*/true);
  restore_inference_checkpoint(*model, reader);
  // What the model did not adopt (a training checkpoint's optimizer state) is not kept
  // for the whole of decoding.
  reader.release_tensors();
  model->eval();
  return LoadedModel{model, std::move(cfg), std::move(context), meta, reader.path()};
}

LoadedModel load_model(const std::string& path, const torch::Device& device) {
  checkpoint::CheckpointReader reader(path);
  return load_model(reader, device);
}

LoadedModel load_ensemble_member(const std::string& path, const checkpoint::CheckpointMeta& first,
                                 const std::string& first_path, const torch::Device& device) {
  checkpoint::CheckpointReader reader(path);
  if (reader.meta().task != first.task)
    throw Error(path + ": a " + reader.meta().task + " checkpoint, but " + first_path + " is a " + first.task +
                " checkpoint (an ensemble needs one task)");
  return load_model(reader, device);
}

}  // namespace csan::tasks
