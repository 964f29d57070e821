#include "toolkit/loading/model_loader.h"

#include "toolkit/core/error.h"
#include "toolkit/loading/inference_checkpoint.h"
#include "toolkit/models/model_registry.h"
#include "toolkit/nn/init.h"
#include "toolkit/training/weights_ema.h"

namespace csan::loading {

LoadedModel load_model(checkpoint::CheckpointReader& reader, const DescribeModel& describe, const torch::Device& device,
                       bool use_ema) {
  const auto& meta = reader.meta();
  ModelDescription description = describe(meta, reader.path());
  core::Config& cfg = description.config;
  models::ModelContext& context = description.context;
  std::shared_ptr<models::Model> model;
  {
    nn::SkipInitialization skip;  // the checkpoint overwrites every weight
    model = models::build_model(cfg, context);
  }
  model->to(device);
  // An inference-only checkpoint (convert-checkpoint) stores converted projections.
  prepare_for_inference_checkpoint(*model, reader);
  reader.load_model(*model, /*adopt=*/!use_ema);  // adopted weights are the file's: not to be written
  if (use_ema) training::load_ema_weights(reader, *model);
  restore_inference_checkpoint(*model, reader);
  // What the model did not adopt (a training checkpoint's optimizer state) is not kept
  // for the whole of decoding.
  reader.release_tensors();
  model->eval();
  return LoadedModel{model, std::move(cfg), std::move(context), meta, reader.path()};
}

LoadedModel load_model(const std::string& path, const DescribeModel& describe, const torch::Device& device,
                       bool use_ema) {
  checkpoint::CheckpointReader reader(path);
  return load_model(reader, describe, device, use_ema);
}

LoadedModel load_ensemble_member(const std::string& path, const checkpoint::CheckpointMeta& first,
                                 const std::string& first_path, const DescribeModel& describe,
                                 const torch::Device& device, bool use_ema) {
  checkpoint::CheckpointReader reader(path);
  if (reader.meta().task != first.task)
    throw Error(path + ": a " + reader.meta().task + " checkpoint, but " + first_path + " is a " + first.task +
                " checkpoint (an ensemble needs one task)");
  return load_model(reader, describe, device, use_ema);
}

}  // namespace csan::loading
