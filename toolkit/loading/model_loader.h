// The one checkpoint -> model loader: rebuilds the model a checkpoint describes from
// what the checkpoint embeds (its task, resolved recipe and the task's data: no data
// directory needed) and loads its weights. csan-generate, checkpoint averaging, the
// benchmarks and the tests use it. How a task's recipe is read and what model context
// its data gives is the task registry's (toolkit/tasks/, above this folder): callers
// pass tasks::describe_model.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "toolkit/checkpoint/checkpoint.h"
#include "toolkit/core/config.h"
#include "toolkit/models/model.h"
#include "toolkit/models/model_context.h"

namespace csan::loading {

// What rebuilding a checkpoint's model takes from the task that wrote it.
struct ModelDescription {
  core::Config config;  // the run's resolved recipe
  models::ModelContext context;
};
// Throws csan::Error naming `path` for a task this build does not have or a recipe that
// does not fit it.
using DescribeModel = std::function<ModelDescription(const checkpoint::CheckpointMeta& meta, const std::string& path)>;

struct LoadedModel {
  std::shared_ptr<models::Model> model;  // in eval mode
  core::Config config;                   // the run's resolved recipe
  models::ModelContext context;
  checkpoint::CheckpointMeta meta;
  std::string path;
};

// The model is built on `device` before its weights are loaded (and, for an
// inference-only checkpoint, converted there); fp32 weights are adopted from the archive
// rather than copied, and the reader's tensors are released afterwards (its meta() and
// progress() stay).
// With `use_ema`, the weights are the checkpoint's EMA (csan-train --store-ema), copied.
// Throws csan::Error naming the file if it is not a readable csan checkpoint, was
// written by a task this build does not have, or its weights do not fit its recipe (or
// it has no EMA to use).
LoadedModel load_model(checkpoint::CheckpointReader& reader, const DescribeModel& describe,
                       const torch::Device& device = torch::kCPU, bool use_ema = false);
LoadedModel load_model(const std::string& path, const DescribeModel& describe,
                       const torch::Device& device = torch::kCPU, bool use_ema = false);

// Member `path` of an ensemble whose first member `first` is: throws csan::Error when
// its task differs ("an ensemble needs one task").
LoadedModel load_ensemble_member(const std::string& path, const checkpoint::CheckpointMeta& first,
                                 const std::string& first_path, const DescribeModel& describe,
                                 const torch::Device& device = torch::kCPU, bool use_ema = false);

}  // namespace csan::loading
