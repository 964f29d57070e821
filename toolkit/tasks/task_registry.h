// Tasks by name ("task.name"), as fairseq's FairseqTask registry: each registered task
// says which keys it reads, how to open its data for training (a training::Task), how to
// size a model from a checkpoint's data alone, and what csan-generate does with its
// checkpoints. Tasks register in files named *_task.cpp (see CSAN_REGISTRATION_ANCHOR).
#pragma once

#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <string>

#include "toolkit/checkpoint/checkpoint.h"
#include "toolkit/core/config.h"
#include "toolkit/core/registry.h"
#include "toolkit/generation/generate_run.h"
#include "toolkit/models/model_context.h"
#include "toolkit/training/task.h"

namespace csan::tasks {

struct TaskSpec {
  std::string doc;           // one line
  std::string model_family;  // models::kEncoderDecoder, models::kTagging
  // Declares the task's own task.* keys WITHOUT defaults (they have values only in
  // recipes of this task) ...
  std::function<void(core::ConfigSchema&)> declare_options;
  // ... and gives their defaults.
  std::function<std::map<std::string, core::Value>()> defaults;
  // Opens cfg's task.data for training. Throws csan::Error naming the file or key.
  std::function<std::unique_ptr<training::Task>(const core::Config&)> open;
  // The model context from a checkpoint's data alone (no data directory); the same
  // function the opened task uses, so training and loading size models alike.
  std::function<models::ModelContext(const checkpoint::CheckpointMeta&, const std::string& path)> model_context;
  // csan-generate on checkpoints of this task: `first` is options.paths[0], already
  // open; the others are opened one at a time (load_ensemble_member checks their task).
  std::function<void(const generation::GenerateOptions&, checkpoint::CheckpointReader& first, std::ostream& out,
                     std::ostream& log)>
      generate;
};

core::Registry<TaskSpec>& task_registry();

}  // namespace csan::tasks
