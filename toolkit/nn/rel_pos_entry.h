// REL_POS of CSAN's Table 1 (Shaw et al. 2018, relative position representations),
// registered as "rel_pos", in the first author's form (layers/attention_pos.py of
// baosongyang/Context-Aware-SAN): one table of 2k rows shared by the heads, each row a
// key part a^K and a value part a^V of head-dimension width, indexed by the key's
// distance from the query clipped to [-k, k - 1] (row clip(j - i + k, 0, 2k - 1)):
//   e_ij = (q_i . k_j + q_i . a^K_ij) / sqrt(d)      (Shaw et al. eq. 5)
//   z_i  = Σ_j α_ij (v_j + a^V_ij)                   (eq. 3)
// The value term is not a bias, so REL_POS runs the general attention path. It serves
// encoder and decoder self-attention and cross-attention (the first author applied it
// to all three; a decoder query's distance to a source key uses their positions).
// Keys model.rel_pos.*; they have values only in recipes whose chains name rel_pos.
#pragma once

#include <cstdint>
#include <vector>

#include "toolkit/core/config.h"
#include "toolkit/core/option_table.h"
#include "toolkit/nn/attention_entry.h"

namespace csan::nn {

struct RelPosOptions {
  int64_t clip = 16;  // k (the first author's code and Shaw et al.'s base setting)
  std::vector<int64_t> encoder_layers{0, 1, 2};
  std::vector<int64_t> decoder_layers;
  std::vector<int64_t> cross_layers;

  static RelPosOptions from_config(const core::Config& cfg);
};

const core::OptionTable<RelPosOptions>& rel_pos_option_table();

class RelPosEntry : public AttentionEntry {
 public:
  RelPosEntry(int64_t head_dim, int64_t clip);

  unsigned uses() const override { return kBias | kValues; }
  torch::Tensor bias(const AttentionInputs& in) override;                                // q . a^K, scaled
  torch::Tensor values(const torch::Tensor& probs, const AttentionInputs& in) override;  // Σ_j α_ij a^V_ij

  // Row of the table for each (query, key) pair: [Tq, Tk] int64.
  torch::Tensor rows(const AttentionInputs& in) const;

  torch::Tensor table;  // [2k, 2d]: a^K in the first d columns, a^V in the last d

 private:
  int64_t head_dim_, clip_;
};

}  // namespace csan::nn
