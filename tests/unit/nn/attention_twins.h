// Two MultiheadAttention modules with the same weights: `fast` keeps an empty attention
// chain (so it takes the fused and decoding kernels where they apply), `general` gets an
// entry that transforms nothing but claims to transform the probabilities, which sends
// it down the general path. Equal outputs mean the kernels compute what the general path
// does.
#pragma once

#include "toolkit/nn/multihead_attention.h"

namespace csan::nn::test_support {

class IdentityProbabilities : public AttentionEntry {
 public:
  unsigned uses() const override { return kProbabilities; }
};

struct AttentionTwins {
  MultiheadAttention fast{nullptr}, general{nullptr};
};

inline AttentionTwins make_attention_twins(int64_t d, int64_t heads, bool bias) {
  torch::manual_seed(11);
  AttentionTwins t;
  t.fast = MultiheadAttention(MultiheadAttentionOptions{d, heads, 0.0, bias});
  t.general = MultiheadAttention(MultiheadAttentionOptions{d, heads, 0.0, bias});
  torch::NoGradGuard no_grad;
  auto a = t.fast->parameters(), b = t.general->parameters();
  for (size_t i = 0; i < a.size(); ++i) b[i].copy_(a[i]);
  t.general->add_entry("identity", std::make_shared<IdentityProbabilities>());
  return t;
}

}  // namespace csan::nn::test_support
