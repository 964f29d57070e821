#include "toolkit/loading/checkpoint_conversion.h"

#include "toolkit/checkpoint/checkpoint.h"
#include "toolkit/core/error.h"
#include "toolkit/loading/inference_checkpoint.h"
#include "toolkit/models/model_registry.h"
#include "toolkit/nn/init.h"
#include "toolkit/training/optimizer.h"

namespace csan::loading {

void rewrite_as_format3(const std::string& input, const std::string& output, const DescribeModel& describe) {
  checkpoint::CheckpointReader reader(input);
  ModelDescription description = describe(reader.meta(), input);
  std::shared_ptr<models::Model> model;
  {
    nn::SkipInitialization skip;  // the checkpoint overwrites every weight
    model = models::build_model(description.config, description.context);
  }
  const bool inference_only = inference_precision_of(reader).has_value();
  prepare_for_inference_checkpoint(*model, reader);
  reader.load_model(*model, /*adopt=*/false);
  checkpoint::CheckpointWriter writer;
  writer.set_meta(reader.meta());
  writer.set_progress(reader.progress());
  if (inference_only) {
    restore_inference_checkpoint(*model, reader);
    store_converted_projections(*model, writer);
  } else {
    writer.set_model(*model);
  }
  // What resuming needs (an averaged or inference-only checkpoint has none of it).
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  if (reader.has_optimizer_state()) {
    // The run's optimizer over the model's parameters: its state has their shapes (a
    // master-weights run's fp32 masters too), and the writer names it by position.
    optimizer = training::build_optimizer(training::unique_parameters(*model), description.config);
    reader.load_optimizer(*optimizer, *model);
    writer.set_optimizer(*optimizer, *model);
  }
  for (const std::string& name : reader.section_names()) {
    if (name == "int8_scales" && inference_only) continue;  // written from the kernels above
    const checkpoint::SectionReader section = reader.section(name);
    for (const std::string& key : section.keys()) writer.section(name).write(key, section.read(key));
  }
  for (const char* generator : {"cpu", "cuda"}) {
    torch::Tensor state;
    if (reader.rng_state(generator, state)) writer.set_rng_state(generator, state);
  }
  writer.write(output);
}

}  // namespace csan::loading
