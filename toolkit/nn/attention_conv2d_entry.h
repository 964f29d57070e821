// SAN+Conv2d (Dufter et al. 2020, Sec. 2.5, Fig. 1 bottom): convoluted attention, 2-D.
// Each head convolves its attention probabilities sigma(A) [Tq x Tk] with one 3 x 3
// filter ('same' zero padding), adds a bias and applies ReLU: A' = relu(conv2d(sigma(A))),
// not renormalized, weighting the values in place of sigma(A). 10 parameters per head and
// layer, in every layer. As the authors' Keras code: Conv2D(1, 3, relu, padding 'same',
// channels_first), glorot_uniform kernel, zero bias. Registered as the attention entry
// "attention_conv2d"; keys model.attention_conv2d.*.
#pragma once

#include <cstdint>
#include <vector>

#include "toolkit/core/option_table.h"
#include "toolkit/nn/attention_entry.h"

namespace csan::nn {

struct AttentionConv2dOptions {
  std::vector<int64_t> layers;  // empty: every layer
  int64_t width = 3;
};
const core::OptionTable<AttentionConv2dOptions>& attention_conv2d_option_table();

class AttentionConv2dEntry : public AttentionEntry {
 public:
  AttentionConv2dEntry(int64_t heads, int64_t width);
  unsigned uses() const override { return kProbabilities; }
  torch::Tensor probabilities(torch::Tensor probs, const AttentionInputs& in) override;

  torch::Tensor weight;  // [H, 1, width, width]
  torch::Tensor bias;    // [H]
};

}  // namespace csan::nn
