// NEIGHBOR of CSAN's Table 1 (Sperber et al. 2018, self-attentional acoustic models),
// registered as "neighbor": the local diagonal Gaussian bias of their self-attention,
//   bias_h(i, j) = -(i - j)^2 / (2 σ_h^2),
// with one learned standard deviation per head. As in their code (xnmt's SAAM
// diag_gauss_mask with square_mask_std), the parameter is s_h and σ_h = s_h^2, which
// keeps σ positive. A bias of positions only: it keeps the fused kernel, and a causal
// decoder's bias does not change as it grows.
// Keys model.neighbor.*; they have values only in recipes whose chains name neighbor.
#pragma once

#include <cstdint>
#include <vector>

#include "toolkit/core/config.h"
#include "toolkit/core/option_table.h"
#include "toolkit/nn/attention_entry.h"

namespace csan::nn {

struct NeighborOptions {
  double init_std = 5.0;  // σ of every head at initialization (learned afterwards)
  std::vector<int64_t> encoder_layers{0, 1, 2};
  std::vector<int64_t> decoder_layers;

  static NeighborOptions from_config(const core::Config& cfg);
};

const core::OptionTable<NeighborOptions>& neighbor_option_table();

class NeighborEntry : public AttentionEntry {
 public:
  NeighborEntry(int64_t num_heads, double init_std);

  unsigned uses() const override { return kBias; }
  torch::Tensor bias(const AttentionInputs& in) override;  // [1, H, Tq, Tk]

  torch::Tensor std_root;  // [H]: s_h, σ_h = s_h^2
};

}  // namespace csan::nn
