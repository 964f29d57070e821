// Everything that defines a Transformer (fairseq's transformer options), read from the
// "model.*" keys of a recipe.
#pragma once

#include <cstdint>
#include <string>

#include "toolkit/core/config.h"
#include "toolkit/nn/transformer_layer_options.h"

namespace csan::models {

struct TransformerOptions {
  int64_t encoder_layers = 6;
  int64_t decoder_layers = 6;
  nn::TransformerLayerOptions layer;  // embed dim, FFN dim, heads, dropouts, norm, bias
  bool learned_pos = false;
  bool no_scale_embedding = false;
  bool share_decoder_input_output_embed = false;
  bool share_all_embeddings = false;
  int64_t max_source_positions = 1024;
  int64_t max_target_positions = 1024;

  static TransformerOptions from_config(const core::Config& cfg);
};

// Declares the keys read by from_config.
void declare_transformer_options(core::ConfigSchema& schema);

}  // namespace csan::models
