// SAN+P (Dufter et al. 2020, Sec. 2.3): direct absolute position interactions. Each head
// learns a t x t matrix A^p added to its attention logits in the first layer,
//   A^{P} = A + A^p,  A^p_{ij} a free parameter per head,
// in place of the position-position term of position embeddings. Registered as the
// attention entry "position_matrix"; keys model.position_matrix.*.
#pragma once

#include <cstdint>
#include <vector>

#include "toolkit/core/option_table.h"
#include "toolkit/nn/attention_entry.h"

namespace csan::nn {

struct PositionMatrixOptions {
  std::vector<int64_t> layers{0};  // as the paper: the first layer only
};
const core::OptionTable<PositionMatrixOptions>& position_matrix_option_table();

class PositionMatrixEntry : public AttentionEntry {
 public:
  // Initialized as the authors' Keras code: glorot_normal over each head's (t, t).
  PositionMatrixEntry(int64_t heads, int64_t max_positions);
  unsigned uses() const override { return kBias; }
  // P[:, queries, keys] as [1, H, Tq, Tk].
  torch::Tensor bias(const AttentionInputs& in) override;

  torch::Tensor matrix;  // [H, t, t]
};

}  // namespace csan::nn
