// SAN+Conv (Dufter et al. 2020, Sec. 2.5, Fig. 1 top): convoluted attention, 1-D. Each
// head convolves its attention probabilities sigma(A) [t x t] along the query axis with
// t filters of width 3 (the t keys are the input channels; 'same' zero padding), adds a
// bias per filter and applies ReLU: A' = relu(conv1d(sigma(A))), not renormalized,
// weighting the values in place of sigma(A). 3 t^2 + t parameters per head and layer, in
// every layer. As the authors' Keras code: Conv1D(t, 3, relu, padding 'same') over the
// [query, key] matrix, glorot_uniform kernel, zero bias. Registered as the attention
// entry "attention_conv1d"; keys model.attention_conv1d.*.
#pragma once

#include <cstdint>
#include <vector>

#include "toolkit/core/option_table.h"
#include "toolkit/nn/attention_entry.h"

namespace csan::nn {

struct AttentionConv1dOptions {
  std::vector<int64_t> layers;  // empty: every layer
  int64_t width = 3;
};
const core::OptionTable<AttentionConv1dOptions>& attention_conv1d_option_table();

class AttentionConv1dEntry : public AttentionEntry {
 public:
  AttentionConv1dEntry(int64_t heads, int64_t max_positions, int64_t width);
  unsigned uses() const override { return kProbabilities; }
  // probs [B, H, Tq, Tk] -> [B, H, Tq, Tk]. Fewer than t keys use the first Tk input
  // channels and filters (as if the missing keys had probability 0 and were dropped).
  torch::Tensor probabilities(torch::Tensor probs, const AttentionInputs& in) override;

  torch::Tensor weight;  // [H * t (filters), t (keys), width], grouped by head
  torch::Tensor bias;    // [H * t]
};

}  // namespace csan::nn
