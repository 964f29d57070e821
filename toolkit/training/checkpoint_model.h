// Rebuilds the model stored in a checkpoint from what the checkpoint itself embeds (the
// resolved recipe and the dictionaries) and loads its weights: what csan-generate,
// checkpoint averaging and tests need, without the data directory.
#pragma once

#include <memory>
#include <string>

#include "toolkit/core/config.h"
#include "toolkit/models/encoder_decoder_model.h"
#include "toolkit/models/model_registry.h"
#include "toolkit/training/checkpoint.h"

namespace csan::training {

struct LoadedModel {
  std::shared_ptr<models::EncoderDecoderModel> model;  // in eval mode
  core::Config config;                                 // the run's resolved recipe
  models::ModelContext context;
  CheckpointMeta meta;
};

// Throws csan::Error naming the file if it is not a readable csan checkpoint.
LoadedModel load_model_from_checkpoint(const std::string& path);

}  // namespace csan::training
