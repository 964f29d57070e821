// LOCAL_SOFT of CSAN's Table 1 (Yang et al. 2018, modeling localness), registered as
// "local_soft", in the form of the first author's code for it (layers/attention_dyn.py of
// baosongyang/Context-Aware-SAN, which models/transformer_local.py uses): from the
// projected query q_i, each local head h predicts a centre and a window,
//   [p_i, d_i] = σ(W_2 tanh(W_1 q_i + b_1) + b_2)           (Yang et al. eq. 9-10, joint)
//   P_i = p_i (I - 1),   D_i = d_i I + 0.1
//   G_ij = -2 ((P_i - j) / D_i)^2                           (eq. 6-7: σ = D_i / 2)
// added to the scores (eq. 8). I is the number of keys the query sees (the sentence's
// length; in a causal decoder the query's position + 1, so it stays put as the decoder
// grows). W_1 is (local heads x head dim) x D, W_2 2 x local heads rows. The first
// `global_heads` heads get no bias (the code's "general heads"). A bias, so it keeps the
// fused training kernel and the incremental decoding kernel.
// Keys model.local_soft.*; they have values only in recipes whose chains name local_soft.
#pragma once

#include <cstdint>
#include <vector>

#include "toolkit/core/config.h"
#include "toolkit/core/option_table.h"
#include "toolkit/nn/attention_entry.h"
#include "toolkit/nn/locality_bias.h"

namespace csan::nn {

struct LocalSoftOptions {
  int64_t global_heads = 0;
  std::vector<int64_t> encoder_layers{0, 1, 2};
  std::vector<int64_t> decoder_layers;
  std::vector<int64_t> cross_layers;

  static LocalSoftOptions from_config(const core::Config& cfg);
};

const core::OptionTable<LocalSoftOptions>& local_soft_option_table();

class LocalSoftEntry : public AttentionEntry {
 public:
  // Throws csan::Error naming model.local_soft.global_heads when no head is left local.
  LocalSoftEntry(int64_t embed_dim, int64_t num_heads, int64_t global_heads);

  unsigned uses() const override { return kBias; }
  torch::Tensor bias(const AttentionInputs& in) override;  // [B, H, Tq, Tk]

  PositionPredictor predictor{nullptr};  // 2 outputs per local head: centres, then windows

 private:
  int64_t num_heads_, global_heads_;
};

}  // namespace csan::nn
