// The fused full-scope attention against the general path of MultiheadAttention
// (reached here through an attention entry that claims a probability transform):
// same outputs and gradients, with padding, causal masks and cross-attention.
#include "toolkit/nn/fused_attention.h"

#include <gtest/gtest.h>

#include "attention_twins.h"
#include "toolkit/nn/multihead_attention.h"

namespace {

using namespace csan::nn;

using Pair = test_support::AttentionTwins;

// Output and every gradient (inputs and parameters) agree between the two paths.
void expect_same(Pair& p, const torch::Tensor& query, const torch::Tensor& key, const AttentionCall& call, bool self) {
  auto run = [&](MultiheadAttention& m, torch::Tensor& gq, torch::Tensor& gk) {
    auto q = query.clone().requires_grad_(), k = key.clone().requires_grad_();
    auto out = self ? m(q, q, q, call) : m(q, k, k, call);
    torch::manual_seed(3);
    auto g = torch::randn_like(out);
    out.backward(g);
    gq = q.grad();
    gk = self ? torch::Tensor() : k.grad();
    return out;
  };
  torch::Tensor fq, fk, gq, gk;
  auto fused = run(p.fast, fq, fk);
  auto general = run(p.general, gq, gk);
  EXPECT_TRUE(torch::allclose(fused, general, 1e-5, 1e-5)) << (fused - general).abs().max();
  EXPECT_TRUE(torch::allclose(fq, gq, 1e-4, 1e-5)) << (fq - gq).abs().max();
  if (!self) {
    EXPECT_TRUE(torch::allclose(fk, gk, 1e-4, 1e-5)) << (fk - gk).abs().max();
  }
  auto a = p.fast->parameters(), b = p.general->parameters();
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_TRUE(torch::allclose(a[i].grad(), b[i].grad(), 1e-4, 1e-5))
        << i << " " << (a[i].grad() - b[i].grad()).abs().max();
}

TEST(FusedAttention, AvailableInThisBuild) { EXPECT_TRUE(fused_attention_available()); }

TEST(FusedAttention, SelfAttentionWithPaddingEqualsGeneralPath) {
  auto p = test_support::make_attention_twins(32, 4, true);
  auto x = torch::randn({3, 7, 32});
  auto mask = torch::zeros({3, 7}, torch::kBool);
  mask[1].narrow(0, 5, 2).fill_(true);
  mask[2].narrow(0, 1, 6).fill_(true);
  AttentionCall call;
  call.key_padding_mask = mask;
  expect_same(p, x, x, call, true);
}

TEST(FusedAttention, CausalSelfAttentionEqualsGeneralPath) {
  auto p = test_support::make_attention_twins(24, 3, false);
  auto x = torch::randn({2, 9, 24});
  AttentionCall call;
  call.causal = true;
  expect_same(p, x, x, call, true);
}

TEST(FusedAttention, CrossAttentionWithPaddingEqualsGeneralPath) {
  auto p = test_support::make_attention_twins(16, 2, true);
  auto q = torch::randn({4, 5, 16}), kv = torch::randn({4, 11, 16});
  auto mask = torch::zeros({4, 11}, torch::kBool);
  mask[0].narrow(0, 3, 8).fill_(true);
  mask[3].narrow(0, 10, 1).fill_(true);
  AttentionCall call;
  call.key_padding_mask = mask;
  expect_same(p, q, kv, call, false);
}

TEST(FusedAttention, ContextIsSoftmaxOfScaledScoresTimesValues) {
  torch::manual_seed(5);
  const int64_t heads = 2, d = 3;
  auto q = torch::randn({2, 4, heads * d}), k = torch::randn({2, 6, heads * d}), v = torch::randn({2, 6, heads * d});
  auto mask = torch::zeros({2, 6}, torch::kBool);
  mask[1].narrow(0, 2, 4).fill_(true);
  auto out = fused_attention(q, k, v, mask, /*causal=*/true, heads, 0.5);
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < 4; ++i) {
        // Query i sees keys up to 6 - 4 + i, and only unpadded ones.
        auto qi = q[b][i].narrow(0, h * d, d);
        std::vector<double> w;
        double sum = 0;
        for (int64_t j = 0; j < 6; ++j) {
          const bool visible = j <= 2 + i && !mask[b][j].item<bool>();
          w.push_back(visible ? std::exp(0.5 * qi.dot(k[b][j].narrow(0, h * d, d)).item<double>()) : 0.0);
          sum += w.back();
        }
        auto expected = torch::zeros({d});
        for (int64_t j = 0; j < 6; ++j) expected += w[j] / sum * v[b][j].narrow(0, h * d, d);
        EXPECT_TRUE(torch::allclose(out[b][i].narrow(0, h * d, d), expected, 1e-5, 1e-5)) << b << h << i;
      }
}

TEST(FusedAttention, QueryWithoutVisibleKeysGetsZeroContext) {
  auto q = torch::randn({1, 2, 4}), k = torch::randn({1, 3, 4});
  auto mask = torch::ones({1, 3}, torch::kBool);
  auto out = fused_attention(q, k, k, mask, false, 2, 1.0);
  EXPECT_TRUE(torch::equal(out, torch::zeros_like(out)));
}

}  // namespace
