// Tasks by name ("task.name"), as fairseq's FairseqTask registry: each registered task
// says which keys it reads, how to open its data for training (a training::Task), how to
// size a model from a checkpoint's data alone, and what csan-generate does with its
// checkpoints (its options and generation). Tasks register in files named *_task.cpp
// (see CSAN_REGISTRATION_ANCHOR). This is the torch half of a task; its torch-free half
// (csan-preprocess and csan-score) is registered under the same name in
// toolkit/commands/task_command.h.
#pragma once

#include <boost/program_options/options_description.hpp>
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <string>

#include "toolkit/checkpoint/checkpoint.h"
#include "toolkit/commands/rebinarize_with_checkpoint.h"
#include "toolkit/core/config.h"
#include "toolkit/core/registry.h"
#include "toolkit/models/model_context.h"
#include "toolkit/tasks/generate.h"
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
  // csan-generate on checkpoints of this task: the task's section of its options, bound
  // to the settings (options of other tasks are refused) ...
  std::function<std::unique_ptr<boost::program_options::options_description>(GenerateOptions&)> generate_options;
  // ... and its generation: `first` is options.paths[0], already open; the others are
  // opened one at a time (loading::load_ensemble_member checks their task).
  std::function<void(const GenerateOptions&, checkpoint::CheckpointReader& first, std::ostream& out, std::ostream& log)>
      generate;
  // csan-train --reuse-dictionaries: DATA_DIR (task.data) binarized again with CHECKPOINT's
  // SentencePiece model and dictionaries into DESTDIR with WORKERS threads, or DATA_DIR
  // itself when it has them already; null for a task that cannot.
  std::function<commands::RebinarizedData(const std::string& data_dir, const std::string& checkpoint,
                                          const std::string& destdir, int workers)>
      rebinarize_data;
};

core::Registry<TaskSpec>& task_registry();

}  // namespace csan::tasks
