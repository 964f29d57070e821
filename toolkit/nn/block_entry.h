// BLOCK of CSAN's Table 1 (Shen et al. 2018b, BiBloSAN), registered as "block", in the
// form the first author re-implemented it (layers/attention_block.py with
// models/transformer_block.py of baosongyang/Context-Aware-SAN). With blocks of n
// positions, per head h:
//   r_i  = intra-block attention: query i attends only to the keys of its own block
//   g    = σ(W_g [r_1..r_H]_i + b_g);   w = softmax over the block's positions of
//          (W_w g + b_w)_h              (a source2token summary per block)
//   s_m  = Σ_{i in block m} w_i r_i     (block representation)
//   o_m  = attention over blocks: queries (W_s [s]_m + b_s)_h / sqrt(d), keys and values s
//   e_m  = G ∘ o_m + (1 - G) ∘ s_m,     G = σ(W_G [s_m; o_m] + b_G)   (fusion gate)
//   out_i = W_O [r_i; e_{block(i)}] + b_O
// The intra-block attention is a bias (keys outside the block hidden), so it keeps the
// fused kernel; the rest is an output term from the context r: the output projection's
// r part is the attention's own out_proj and its e part the entry's `merge` (D x D).
// Unlike the first author's code, padding never enters a block summary or the
// inter-block attention, so a sentence's result does not depend on its batch. Encoder
// self-attention only: a block summary reads the whole block, later positions included.
// Keys model.block.*; they have values only in recipes whose chains name block.
#pragma once

#include <cstdint>
#include <vector>

#include "toolkit/core/config.h"
#include "toolkit/core/option_table.h"
#include "toolkit/nn/attention_entry.h"
#include "toolkit/nn/dense.h"

namespace csan::nn {

struct BlockOptions {
  int64_t size = 4;  // n, positions per block (the first author's code)
  std::vector<int64_t> encoder_layers{0, 1, 2};

  static BlockOptions from_config(const core::Config& cfg);
};

const core::OptionTable<BlockOptions>& block_option_table();

class BlockEntry : public AttentionEntry {
 public:
  // attention_dropout: on the inter-block attention weights in training, as on the intra-block ones.
  BlockEntry(int64_t embed_dim, int64_t num_heads, int64_t block_size, double attention_dropout);

  unsigned uses() const override { return kBias | kOutput; }
  torch::Tensor bias(const AttentionInputs& in) override;  // [1, 1, Tq, Tk]
  torch::Tensor output(const torch::Tensor& context, const AttentionInputs& in) override;

  Dense summary_gate{nullptr};    // W_g
  Dense summary_logits{nullptr};  // W_w, one logit per head
  Dense block_query{nullptr};     // W_s
  Dense fusion_gate{nullptr};     // W_G
  Dense merge{nullptr};           // the e half of W_O (no bias: out_proj has it)

 private:
  int64_t num_heads_, block_size_;
  double attention_dropout_;
};

}  // namespace csan::nn
