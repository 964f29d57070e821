// Where an attention sits in a model. Sites are named by role ("encoder.self",
// "decoder.self", "decoder.cross"; a model with two encoder branches adds e.g.
// "encoder.left.self"), so that a recipe chooses an attention chain per role under
// model.attention.<role> and an entry decides per layer whether it applies.
#pragma once

#include <cstdint>
#include <string>

namespace csan::nn {

struct AttentionSite {
  std::string role;         // "encoder.self", "decoder.self", "decoder.cross", ...
  int64_t layer = 0;        // 0 = lowest
  int64_t layer_count = 1;  // layers with this role (for entries that check their layer lists)
  int64_t num_heads = 1;
  int64_t embed_dim = 0;  // model dimension (heads x head dimension)
  bool causal = false;    // a query sees no later key (decoder self-attention)
  // Queries and keys come from the same sequence (positions are comparable).
  bool self_attention = true;
  // The longest sequence this site ever sees, for entries whose parameters are sized by
  // it (the tagger's t x t position matrices); 0: unbounded.
  int64_t max_positions = 0;

  int64_t head_dim() const { return num_heads > 0 ? embed_dim / num_heads : 0; }
  // "encoder.self layer 2", for errors.
  std::string describe() const { return role + " layer " + std::to_string(layer); }
};

}  // namespace csan::nn
