// Everything that defines a Transformer (fairseq's transformer options), read from the
// "model.*" keys of a recipe. Each key is written once, in transformer_option_table().
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "toolkit/core/config.h"
#include "toolkit/core/option_table.h"
#include "toolkit/nn/transformer_layer_options.h"

namespace csan::models {

struct TransformerOptions {
  int64_t encoder_layers = 6;
  int64_t decoder_layers = 6;
  nn::TransformerLayerOptions layer;  // embed dim, FFN dim, heads, dropouts, norm, bias
  bool learned_pos = false;
  std::string sinusoidal_layout = "fairseq";  // fairseq | marian (nn::PositionalEmbeddingOptions)
  bool layernorm_embedding = false;           // fairseq's: a layer norm after embeddings + positions
  bool no_scale_embedding = false;
  bool share_decoder_input_output_embed = false;
  bool share_all_embeddings = false;
  bool final_logits_bias = false;     // Marian's: a learned bias added to the output logits
  std::string decoder_start = "eos";  // the decoder's first input: eos (fairseq) | pad (Marian)
  int64_t max_source_positions = 1024;
  int64_t max_target_positions = 1024;

  static TransformerOptions from_config(const core::Config& cfg);
};

const core::OptionTable<TransformerOptions>& transformer_option_table();

// The attention roles of a Transformer: encoder.self, decoder.self, decoder.cross.
const std::vector<std::string>& transformer_attention_roles();

}  // namespace csan::models
