// Shared by the attention tests that check a CSAN window against its formula: an
// attention-chain entry that hides, as a -inf bias, every key more than `half` positions
// from the query (the window of CSAN's 1-D entry written as a plain mask).
#pragma once

#include <torch/torch.h>

#include <cmath>

#include "toolkit/nn/attention_entry.h"

namespace csan::testing {

class WindowMask : public nn::AttentionEntry {
 public:
  explicit WindowMask(int64_t half) : half_(half) {}
  unsigned uses() const override { return kBias; }
  torch::Tensor bias(const nn::AttentionInputs& in) override {
    auto far = (in.key_positions().unsqueeze(0) - in.query_positions().unsqueeze(1)).abs().gt(half_);
    return torch::zeros({1, 1, in.query_length, in.key_length}).masked_fill(far, -INFINITY);
  }

 private:
  int64_t half_;
};

}  // namespace csan::testing
