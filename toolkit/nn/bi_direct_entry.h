// BI_DIRECT of CSAN's Table 1 (DiSAN's directional masks, Shen et al. 2018a), registered
// as "bi_direct", in the form the first author re-implemented it (layers/attention_di.py
// of baosongyang/Context-Aware-SAN): the first `global_heads` heads keep full scope, the
// others alternate a forward mask (query i sees keys j <= i) and a backward mask (j >= i),
// starting with forward. Parameter-free; a bias, so it keeps the fused kernel. Encoder
// self-attention only: a backward head in a causal decoder would see nothing but itself.
// Keys model.bi_direct.*; they have values only in recipes whose chains name bi_direct.
#pragma once

#include <cstdint>
#include <vector>

#include "toolkit/core/config.h"
#include "toolkit/core/option_table.h"
#include "toolkit/nn/attention_entry.h"

namespace csan::nn {

struct BiDirectOptions {
  int64_t global_heads = 0;                      // heads without a direction (the code's "general heads")
  std::vector<int64_t> encoder_layers{0, 1, 2};  // the lowest three, as CSAN's Table 1

  static BiDirectOptions from_config(const core::Config& cfg);
};

const core::OptionTable<BiDirectOptions>& bi_direct_option_table();

class BiDirectEntry : public AttentionEntry {
 public:
  // Throws csan::Error naming model.bi_direct.global_heads unless num_heads - global_heads
  // is a positive even number (forward/backward pairs).
  BiDirectEntry(int64_t num_heads, int64_t global_heads);

  unsigned uses() const override { return kBias; }
  torch::Tensor bias(const AttentionInputs& in) override;  // [1, H, Tq, Tk]

 private:
  torch::Tensor head_kind_;  // [H] int64: 0 full scope, 1 forward, 2 backward
};

}  // namespace csan::nn
