// What CCN adds to the Transformer's options (Li & Jiang 2020): the input corruption of
// the two encoder branches and the gate assignment of eq. 3-4, i.e. which branch feeds
// the Q, K and V gates of each branch's attention. Read from the "model.ccn.*" keys,
// each written once in ccn_option_table(); the sizes, norms and embeddings are the
// Transformer's keys (transformer_options.h).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "toolkit/core/config.h"
#include "toolkit/core/option_table.h"

namespace csan::models {

// The two encoder branches and the memories they leave.
enum CcnBranch : int { kLeft = 0, kRight = 1 };
inline const char* branch_name(int branch) { return branch == kLeft ? "left" : "right"; }

// Which branch feeds each gate: alpha(.) of eq. 3 for the left branch, beta(.) of eq. 4
// for the right one.
struct EncoderGates {
  int query, key, value;
};
struct DecoderGates {  // the query is always the decoder (alpha(Q) = beta(Q) = 'decoder')
  int key, value;
};

struct CcnOptions {
  // Per sentence and branch, in training only: the probability of swapping two of its
  // subword tokens (Sec. 2.2).
  double swap_probability = 0.5;
  // [Q, K, V] of the encoder branches' attentions; crossed (Sec. 2.2, Fig. 2) by default.
  // [left, left, left] and [right, right, right] are two plain self-attention encoders.
  std::vector<std::string> encoder_left_qkv = {"right", "left", "left"};
  std::vector<std::string> encoder_right_qkv = {"left", "right", "right"};
  // [K, V] of the decoder's two encoder-decoder attentions; crossed by default.
  std::vector<std::string> decoder_left_kv = {"right", "left"};
  std::vector<std::string> decoder_right_kv = {"left", "right"};

  // Throws csan::Error naming the key for a gate list of the wrong length.
  static CcnOptions from_config(const core::Config& cfg);

  std::array<EncoderGates, 2> encoder_gates() const;
  std::array<DecoderGates, 2> decoder_gates() const;
};

const core::OptionTable<CcnOptions>& ccn_option_table();

// encoder.left.self, encoder.right.self, decoder.self, decoder.cross.left, decoder.cross.right.
const std::vector<std::string>& ccn_attention_roles();

}  // namespace csan::models
