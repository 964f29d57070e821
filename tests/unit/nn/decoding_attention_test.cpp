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

// softmax(scaling * q k^T + bias, hiding padding) v per (query row, head), in double, on
// dense keys and values [Rk, H, Tk, d]; query row r reads key row r / G.
torch::Tensor reference_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                  const torch::Tensor& mask, int64_t heads, double scaling,
                                  const torch::Tensor& bias) {
  const int64_t rows = q.size(0), groups = rows / k.size(0), d = k.size(3);
  auto qd = q.to(torch::kDouble).view({rows, heads, 1, d});
  auto kd = k.to(torch::kDouble).repeat_interleave(groups, 0), vd = v.to(torch::kDouble).repeat_interleave(groups, 0);
  auto scores = torch::matmul(qd, kd.transpose(2, 3)).mul(scaling);  // [R, H, 1, Tk]
  if (bias.defined()) scores = scores + bias.to(torch::kDouble).unsqueeze(2);
  if (mask.defined())
    scores = scores.masked_fill(mask.repeat_interleave(groups, 0).view({rows, 1, 1, -1}), -INFINITY);
  auto weights = torch::softmax(scores, -1).nan_to_num(0.0);  // a row with nothing visible: zero context
  return torch::matmul(weights, vd).view({rows, heads * d}).to(torch::kFloat);
}

// Heads of 64 (every shipped Transformer) take a kernel of their own, 8 keys at a time:
// against the formula for key counts that fill no block, one block, and one and a bit;
// with padding (a key row with none visible included), a bias, shared encoder keys,
// a beam history, and float and bf16 caches.
TEST(DecodingAttention, HeadsOf64AgreeWithTheFormulaForEveryBlockOfKeys) {
  torch::manual_seed(8);
  const int64_t heads = 3, d = 64, key_rows = 3, groups = 2;
  for (const auto type : {torch::kFloat, torch::kBFloat16})
    for (const int64_t tk : {1, 5, 8, 11, 19}) {
      SCOPED_TRACE(std::string(type == torch::kFloat ? "float" : "bf16") + " tk " + std::to_string(tk));
      auto k = torch::randn({key_rows, heads, tk, d}).to(type), v = torch::randn({key_rows, heads, tk, d}).to(type);
      auto q = torch::randn({key_rows * groups, heads * d});
      auto mask = torch::zeros({key_rows, tk}, torch::kBool);
      mask[1].fill_(true);                                  // nothing visible: zero context
      if (tk > 2) mask[2].narrow(0, tk - 2, 2).fill_(true);  // a shorter sentence
      auto bias = torch::randn({key_rows * groups, heads, tk});
      EXPECT_TRUE(torch::allclose(decoding_attention(q, k, v, mask, heads, 0.125),
                                  reference_attention(q, k, v, mask, heads, 0.125, {}), 1e-5, 1e-5));
      auto with_bias = decoding_attention(q, k, v, mask, heads, 0.125, {}, bias);
      EXPECT_TRUE(torch::allclose(with_bias, reference_attention(q, k, v, mask, heads, 0.125, bias), 1e-5, 1e-5));
      EXPECT_TRUE(torch::equal(with_bias.narrow(0, groups, groups), torch::zeros({groups, heads * d})));
      // A beam history over stored rows in IncrementalState's position-major layout.
      const int64_t stored = 4, rows = 5;
      auto storage_k = torch::randn({tk, stored, heads, d}).to(type), storage_v = torch::randn({tk, stored, heads, d}).to(type);
      auto rows_at = torch::randint(stored, {rows, tk}, torch::kLong);
      auto dense_k = torch::empty({rows, heads, tk, d}, type), dense_v = torch::empty({rows, heads, tk, d}, type);
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < tk; ++j) {
          dense_k[r].select(1, j).copy_(storage_k[j][rows_at[r][j].item<int64_t>()]);
          dense_v[r].select(1, j).copy_(storage_v[j][rows_at[r][j].item<int64_t>()]);
        }
      auto hq = torch::randn({rows, heads * d});
      EXPECT_TRUE(torch::allclose(decoding_attention(hq, storage_k.permute({1, 2, 0, 3}), storage_v.permute({1, 2, 0, 3}),
                                                     {}, heads, 0.125, rows_at),
                                  reference_attention(hq, dense_k, dense_v, {}, heads, 0.125, {}), 1e-5, 1e-5));
    }
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

// Compact caches: bf16 keys and values are widened exactly, so the kernel on them is the
// kernel on float caches holding the same (rounded) numbers (up to where the compiler
// fuses multiply-adds, which the two instantiations need not share).
TEST(DecodingAttention, Bf16CachesGiveTheContextOfFloatCachesHoldingTheSameValues) {
  torch::manual_seed(7);
  const int64_t stored = 4, heads = 2, d = 21, tk = 5;  // d 21: a 16-wide block and a tail
  auto k = torch::randn({stored, heads, tk, d}).to(torch::kBFloat16);
  auto v = torch::randn({stored, heads, tk, d}).to(torch::kBFloat16);
  auto mask = torch::zeros({stored, tk}, torch::kBool);
  mask[3].narrow(0, 2, 3).fill_(true);
  auto grouped = torch::randn({stored * 3, heads * d});
  EXPECT_TRUE(torch::allclose(decoding_attention(grouped, k, v, mask, heads, 0.3),
                              decoding_attention(grouped, k.to(torch::kFloat), v.to(torch::kFloat), mask, heads, 0.3),
                              1e-6, 1e-6));
  auto rows_at = torch::tensor(std::vector<int64_t>{3, 0, 1, 1, 2, 0, 0, 3, 2, 1}).view({2, tk});
  auto q = torch::randn({2, heads * d});
  EXPECT_TRUE(torch::allclose(decoding_attention(q, k, v, {}, heads, 0.3, rows_at),
                              decoding_attention(q, k.to(torch::kFloat), v.to(torch::kFloat), {}, heads, 0.3, rows_at),
                              1e-6, 1e-6));
  EXPECT_THROW(decoding_attention(q, k, v.to(torch::kFloat), {}, heads, 0.3, rows_at), c10::Error);  // mixed types
}

// A state with compact caches stores float keys and values as bf16 (the growing ones
// and the fixed ones), gives them back as float from at(), and leaves other entries
// (and states without a compact type) exactly as written.
TEST(DecodingAttention, CompactStatesStoreKeysAndValuesInBf16AndGiveThemBackAsWritten) {
  const auto positions = torch::randn({3, 2, 1, 8});
  IncrementalState compact, plain;
  compact.set_compact_type(torch::kBFloat16);
  for (IncrementalState* s : {&compact, &plain}) {
    s->append("self.prev_key", positions, /*compact=*/true);
    s->append("self.prev_key", positions * 2, /*compact=*/true);
    s->append("conv", positions);
    s->set("cross.prev_key", positions.squeeze(2), /*compact=*/true);
    s->set("lengths", torch::arange(3));
  }
  const auto rounded = [](const torch::Tensor& t) { return t.to(torch::kBFloat16).to(torch::kFloat); };
  EXPECT_EQ(compact.history("self.prev_key").positions.scalar_type(), torch::kBFloat16);
  EXPECT_EQ(compact.stored("cross.prev_key").scalar_type(), torch::kBFloat16);
  EXPECT_EQ(compact.at("self.prev_key").scalar_type(), torch::kFloat);
  EXPECT_TRUE(torch::equal(compact.at("self.prev_key"), rounded(torch::cat({positions, positions * 2}, 2))));
  EXPECT_TRUE(torch::equal(compact.at("cross.prev_key"), rounded(positions.squeeze(2))));
  EXPECT_TRUE(torch::equal(compact.at("conv"), positions));  // not compact: as written
  EXPECT_TRUE(torch::equal(compact.at("lengths"), torch::arange(3)));
  EXPECT_TRUE(torch::equal(plain.at("self.prev_key"), torch::cat({positions, positions * 2}, 2)));
  EXPECT_EQ(plain.stored("cross.prev_key").scalar_type(), torch::kFloat);
  compact.reorder_beams(torch::tensor(std::vector<int64_t>{2, 2, 0}), torch::tensor(std::vector<int64_t>{1, 0}));
  EXPECT_EQ(compact.stored("cross.prev_key").scalar_type(), torch::kBFloat16);
  EXPECT_TRUE(torch::equal(compact.at("cross.prev_key"),
                           rounded(positions.squeeze(2)).index_select(0, torch::tensor(std::vector<int64_t>{1, 0}))));
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

// With compact (bf16) caches the kernel reads bf16 and the general path the same values
// widened by at(): the two still agree, in self-attention and over shared encoder keys.
TEST(DecodingAttention, CompactCachesAgreeWithTheGeneralPathOnTheSameCaches) {
  torch::NoGradGuard no_grad;
  auto t = make_eval_twins(32, 4);
  const int64_t sentences = 2, beams = 3;
  auto encoder = torch::randn({sentences, 7, 32});
  IncrementalState kernel_state, general_state;
  kernel_state.set_compact_type(torch::kBFloat16);
  general_state.set_compact_type(torch::kBFloat16);
  AttentionCall self, cross;
  self.causal = true;
  self.cache_key = "self";
  cross.static_kv = true;
  cross.cache_key = "cross";
  for (int64_t step = 0; step < 4; ++step) {
    auto x = torch::randn({sentences * beams, 1, 32});
    self.state = cross.state = &kernel_state;
    auto a = t.fast(x, x, x, self);
    auto c = t.fast(x, encoder, encoder, cross);
    self.state = cross.state = &general_state;
    auto b = t.general(x, x, x, self);
    auto d = t.general(x, encoder, encoder, cross);
    ASSERT_TRUE(torch::allclose(a, b, 1e-5, 1e-6)) << step << " " << (a - b).abs().max();
    ASSERT_TRUE(torch::allclose(c, d, 1e-5, 1e-6)) << step << " " << (c - d).abs().max();
  }
  EXPECT_EQ(kernel_state.history("self.prev_key").positions.scalar_type(), torch::kBFloat16);
  EXPECT_EQ(kernel_state.stored("cross.prev_value").scalar_type(), torch::kBFloat16);
}

}  // namespace
