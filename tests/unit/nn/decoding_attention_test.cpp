// The decoding-step attention kernel: against the formula on strided cache views, and
// inside MultiheadAttention against the general path (reached through an attention
// entry that claims a probability transform) over whole incremental decodings.
#include "toolkit/nn/decoding_attention.h"

#include <gtest/gtest.h>

#include <cmath>

#include "attention_twins.h"
#include "toolkit/nn/multihead_attention.h"

namespace {

using namespace csan::nn;

TEST(DecodingAttention, ContextIsSoftmaxOfScaledScoresTimesValuesOnStridedCaches) {
  torch::manual_seed(5);
  // head_dim 21: one 16-wide block of the dot product plus a tail.
  const int64_t key_rows = 2, groups = 3, heads = 2, d = 21, tk = 6;
  // Caches as the decoder keeps them: [rows capacity, H, positions capacity, d], filled part viewed.
  auto k = torch::randn({key_rows + 1, heads, tk + 4, d}).narrow(0, 0, key_rows).narrow(2, 0, tk);
  auto v = torch::randn({key_rows + 1, heads, tk + 4, d}).narrow(0, 0, key_rows).narrow(2, 0, tk);
  // Queries as a slice of a fused projection: row stride larger than the row.
  auto q = torch::randn({key_rows * groups, 3 * heads * d}).narrow(1, 0, heads * d);
  auto mask = torch::zeros({key_rows, tk}, torch::kBool);
  mask[1].narrow(0, 4, 2).fill_(true);
  auto out = decoding_attention(q, k, v, mask, heads, 0.25);
  ASSERT_EQ(out.sizes(), torch::IntArrayRef({key_rows * groups, heads * d}));
  for (int64_t r = 0; r < key_rows * groups; ++r)
    for (int64_t h = 0; h < heads; ++h) {
      const int64_t kr = r / groups;
      auto qh = q[r].narrow(0, h * d, d);
      std::vector<double> w;
      double sum = 0;
      for (int64_t j = 0; j < tk; ++j) {
        const bool visible = !mask[kr][j].item<bool>();
        w.push_back(visible ? std::exp(0.25 * qh.dot(k[kr][h][j]).item<double>()) : 0.0);
        sum += w.back();
      }
      auto expected = torch::zeros({d});
      for (int64_t j = 0; j < tk; ++j) expected += w[j] / sum * v[kr][h][j];
      EXPECT_TRUE(torch::allclose(out[r].narrow(0, h * d, d), expected, 1e-5, 1e-5)) << r << " " << h;
    }
}

TEST(DecodingAttention, RowsReadTheirPositionsFromTheStoredRowsTheHistoryNames) {
  torch::manual_seed(6);
  const int64_t stored = 5, rows = 3, heads = 2, d = 8, tk = 4;
  // Position-major storage, viewed as [stored rows, H, T, d] (IncrementalState's layout).
  auto k = torch::randn({tk, stored, heads, d}).permute({1, 2, 0, 3});
  auto v = torch::randn({tk, stored, heads, d}).permute({1, 2, 0, 3});
  auto rows_at = torch::tensor(std::vector<int64_t>{4, 0, 0, 2, 1, 1, 3, 0, 2, 2, 2, 4}).view({rows, tk});
  auto q = torch::randn({rows, heads * d});
  auto out = decoding_attention(q, k, v, {}, heads, 0.5, rows_at);
  // The same rows gathered densely: row r, position j <- stored row rows_at[r][j].
  auto dense_k = torch::empty({rows, heads, tk, d}), dense_v = torch::empty({rows, heads, tk, d});
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < tk; ++j) {
      dense_k[r].select(1, j).copy_(k[rows_at[r][j].item<int64_t>()].select(1, j));
      dense_v[r].select(1, j).copy_(v[rows_at[r][j].item<int64_t>()].select(1, j));
    }
  auto expected = decoding_attention(q, dense_k, dense_v, {}, heads, 0.5);
  EXPECT_TRUE(torch::allclose(out, expected, 1e-6, 1e-6)) << (out - expected).abs().max();
  EXPECT_THROW(decoding_attention(q, k, v, {}, heads, 0.5, rows_at + 1), c10::Error);  // row 5 is not stored
}

TEST(DecodingAttention, KeyRowWithoutVisibleKeysGivesZeroContext) {
  auto q = torch::randn({4, 8}), k = torch::randn({2, 2, 3, 4});
  auto mask = torch::zeros({2, 3}, torch::kBool);
  mask[1].fill_(true);
  auto out = decoding_attention(q, k, k, mask, 2, 1.0);
  EXPECT_TRUE(torch::equal(out.narrow(0, 2, 2), torch::zeros({2, 8})));
  EXPECT_GT(out.narrow(0, 0, 2).abs().sum().item<double>(), 0.0);
}

TEST(DecodingAttention, RejectsMismatchedShapes) {
  auto k = torch::randn({2, 2, 3, 4});
  EXPECT_THROW(decoding_attention(torch::randn({3, 8}), k, k, {}, 2, 1.0), c10::Error);  // 3 rows, 2 key rows
  EXPECT_THROW(decoding_attention(torch::randn({4, 6}), k, k, {}, 2, 1.0), c10::Error);  // width != H * d
  EXPECT_THROW(decoding_attention(torch::randn({4, 8}), k, k, torch::zeros({2, 4}, torch::kBool), 2, 1.0), c10::Error);
}

test_support::AttentionTwins make_eval_twins(int64_t d, int64_t heads) {
  auto t = test_support::make_attention_twins(d, heads, true);
  t.fast->eval();
  t.general->eval();
  return t;
}

TEST(DecodingAttention, IncrementalSelfAttentionEqualsTheGeneralPath) {
  torch::NoGradGuard no_grad;  // as in generation: the kernel serves inference only
  auto t = make_eval_twins(40, 2);
  auto x = torch::randn({3, 7, 40});
  IncrementalState kernel_state, general_state;
  AttentionCall call;
  call.causal = true;
  call.cache_key = "self";
  for (int64_t step = 0; step < 7; ++step) {
    auto xt = x.narrow(1, step, 1);
    call.state = &kernel_state;
    auto a = t.fast(xt, xt, xt, call);
    call.state = &general_state;
    auto b = t.general(xt, xt, xt, call);
    ASSERT_TRUE(torch::allclose(a, b, 1e-5, 1e-6)) << step << " " << (a - b).abs().max();
  }
}

TEST(DecodingAttention, BeamsSharingEncoderKeysEqualTheGeneralPath) {
  torch::NoGradGuard no_grad;
  auto t = make_eval_twins(32, 4);
  const int64_t sentences = 3, beams = 5, source = 9;
  auto encoder = torch::randn({sentences, source, 32});
  auto mask = torch::zeros({sentences, source}, torch::kBool);
  mask[0].narrow(0, 6, 3).fill_(true);
  mask[2].narrow(0, 8, 1).fill_(true);
  IncrementalState kernel_state, general_state;
  AttentionCall call;
  call.static_kv = true;
  call.key_padding_mask = mask;
  call.cache_key = "cross";
  for (int64_t step = 0; step < 3; ++step) {
    auto q = torch::randn({sentences * beams, 1, 32});
    call.state = &kernel_state;
    auto a = t.fast(q, encoder, encoder, call);
    call.state = &general_state;
    auto b = t.general(q, encoder, encoder, call);
    ASSERT_TRUE(torch::allclose(a, b, 1e-5, 1e-6)) << step << " " << (a - b).abs().max();
  }
}

}  // namespace
