// SAN+R (Dufter et al. 2020, Sec. 2.3): direct relative position interactions. Each head
// learns a^r in R^{2t} and adds A^r to its attention logits in the first layer:
//   directed (the paper's equation):  A^r_{ij} = a^r_{i-j+t}
//   circulant (the authors' code):    A^r = Re(F^{-1} diag(a^r) F)[:t, :t], F the 2t-point
//                                     DFT (TensorFlow's LinearOperatorCirculant with a^r as
//                                     its spectrum, cast to float), i.e.
//                                     A^r_{ij} = 1/(2t) sum_m a^r_m cos(2 pi m (i-j) / (2t)),
//                                     symmetric in i - j.
// Registered as the attention entry "relative_bias"; keys model.relative_bias.*.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "toolkit/core/option_table.h"
#include "toolkit/nn/attention_entry.h"

namespace csan::nn {

struct RelativeBiasOptions {
  std::vector<int64_t> layers{0};
  std::string form = "directed";  // directed | circulant
};
const core::OptionTable<RelativeBiasOptions>& relative_bias_option_table();

class RelativeBiasEntry : public AttentionEntry {
 public:
  // Initialized as the authors' Keras code: glorot_normal over each head's (2t,).
  RelativeBiasEntry(int64_t heads, int64_t max_positions, bool circulant);
  unsigned uses() const override { return kBias; }
  torch::Tensor bias(const AttentionInputs& in) override;

  torch::Tensor weights;  // a^r per head: [H, 2t]

 private:
  int64_t t_;
  bool circulant_;
  torch::Tensor cosines_;  // circulant: [2t, 2t], cos(2 pi m n / 2t) / 2t
};

}  // namespace csan::nn
