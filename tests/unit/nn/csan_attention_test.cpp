// CSAN attention against references written directly from the paper's equations with
// explicit loops (eq. 4-6 for 1-D, eq. 7-9 for 2-D), on random inputs with padding.
#include "toolkit/nn/csan_attention.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "toolkit/core/error.h"

namespace {

using namespace csan::nn;

struct Inputs {
  torch::Tensor q, k, v, pad;  // pad: [B, T] bool or undefined
};

// lengths: real tokens per sentence (right padding up to T).
Inputs random_inputs(int64_t heads, int64_t t, std::vector<int64_t> lengths, int64_t dim = 5, uint64_t seed = 3) {
  torch::manual_seed(seed);
  const int64_t batch = static_cast<int64_t>(lengths.size());
  Inputs in;
  in.q = torch::randn({batch, heads, t, dim}).requires_grad_();
  in.k = torch::randn({batch, heads, t, dim}).requires_grad_();
  in.v = torch::randn({batch, heads, t, dim}).requires_grad_();
  in.pad = torch::zeros({batch, t}, torch::kBool);
  for (int64_t b = 0; b < batch; ++b) in.pad[b].narrow(0, lengths[b], t - lengths[b]).fill_(true);
  return in;
}

bool is_pad(const Inputs& in, int64_t b, int64_t j) { return in.pad.defined() && in.pad[b][j].item<bool>(); }

// Eq. 4-6: q_i^h attends over k_{i-M/2..i+M/2}^h, clipped at the sentence ends, never
// at padding (a padding query, whose output is unused, sees its own position).
torch::Tensor naive_1d(const Inputs& in, int64_t m, bool causal = false) {
  const int64_t batch = in.q.size(0), heads = in.q.size(1), t = in.q.size(2);
  std::vector<torch::Tensor> rows;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < t; ++i) {
        std::vector<torch::Tensor> keys, values;
        for (int64_t j = i - m / 2; j <= (causal ? i : i + m / 2); ++j) {
          if (j < 0 || j >= t || (is_pad(in, b, j) && j != i)) continue;
          keys.push_back(in.k[b][h][j]);
          values.push_back(in.v[b][h][j]);
        }
        auto weights = torch::softmax(torch::matmul(torch::stack(keys), in.q[b][h][i]), 0);
        rows.push_back(torch::matmul(weights, torch::stack(values)));
      }
  return torch::stack(rows).view(in.q.sizes());
}

// Eq. 7-9: the union of the 1-D windows of heads h-N/2..h+N/2, one softmax.
torch::Tensor naive_2d(const Inputs& in, int64_t m, int64_t n, HeadBoundary boundary, bool causal = false) {
  const int64_t batch = in.q.size(0), heads = in.q.size(1), t = in.q.size(2);
  std::vector<torch::Tensor> rows;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < t; ++i) {
        std::vector<torch::Tensor> keys, values;
        for (int64_t g = h - n / 2; g <= h + n / 2; ++g) {
          const bool outside = g < 0 || g >= heads;
          if (outside && boundary == HeadBoundary::Truncate) continue;
          const int64_t ring = (g + heads) % heads, edge = std::clamp<int64_t>(g, 0, heads - 1);
          const int64_t key_head = ring, value_head = boundary == HeadBoundary::Authors ? edge : ring;
          for (int64_t j = i - m / 2; j <= (causal ? i : i + m / 2); ++j) {
            if (j < 0 || j >= t || (is_pad(in, b, j) && j != i)) continue;
            keys.push_back(in.k[b][key_head][j]);
            values.push_back(in.v[b][value_head][j]);
          }
        }
        auto weights = torch::softmax(torch::matmul(torch::stack(keys), in.q[b][h][i]), 0);
        rows.push_back(torch::matmul(weights, torch::stack(values)));
      }
  return torch::stack(rows).view(in.q.sizes());
}

torch::Tensor run(const Inputs& in, int64_t m, int64_t n, HeadBoundary boundary, CsanPath path, bool causal = false,
                  CsanMaskCache* masks = nullptr) {
  CsanCall call;
  call.key_padding_mask = in.pad;
  call.path = path;
  call.causal = causal;
  call.masks = masks;
  return csan_attention(in.q, in.k, in.v, CsanWindow{m + 1, n + 1, boundary}, call);
}

struct Result {
  torch::Tensor out, dq, dk, dv;
};

// Output and the gradients of a fixed random projection of it.
Result with_gradients(const Inputs& in, const std::function<torch::Tensor()>& f) {
  for (auto* t : {&in.q, &in.k, &in.v})
    if (t->grad().defined()) t->mutable_grad().zero_();
  torch::Tensor out = f();
  torch::manual_seed(11);
  (out * torch::randn(out.sizes())).sum().backward();
  return {out.detach(), in.q.grad().clone(), in.k.grad().clone(), in.v.grad().clone()};
}

void expect_results_close(const Result& a, const Result& b, const std::string& what) {
  const double tol = 1e-5;
  EXPECT_TRUE(torch::allclose(a.out, b.out, tol, tol)) << what << " output, max diff " << (a.out - b.out).abs().max();
  EXPECT_TRUE(torch::allclose(a.dq, b.dq, tol, tol)) << what << " dq, max diff " << (a.dq - b.dq).abs().max();
  EXPECT_TRUE(torch::allclose(a.dk, b.dk, tol, tol)) << what << " dk, max diff " << (a.dk - b.dk).abs().max();
  EXPECT_TRUE(torch::allclose(a.dv, b.dv, tol, tol)) << what << " dv, max diff " << (a.dv - b.dv).abs().max();
}

struct CsanWindowCase {
  int64_t m, n, heads, t;
  std::vector<int64_t> lengths;
};

// Windows larger than the sentence, a one-token sentence, edge heads, long enough
// sentences for several query blocks in the banded path.
const std::vector<CsanWindowCase> kCases = {
    {2, 0, 2, 7, {7, 4, 1}},  {10, 0, 3, 9, {9, 6}},   {4, 2, 4, 12, {12, 8, 1}},
    {10, 2, 3, 5, {5, 3}},    {6, 4, 8, 10, {10, 7}},  {4, 2, 4, 41, {41, 30, 3}},
    {10, 2, 4, 60, {60, 13}}, {0, 2, 4, 6, {6, 2}},
};

std::string name(const CsanWindowCase& c, HeadBoundary boundary, CsanPath path) {
  return "M=" + std::to_string(c.m) + " N=" + std::to_string(c.n) + " H=" + std::to_string(c.heads) +
         " T=" + std::to_string(c.t) + " " + head_boundary_name(boundary) + " path " +
         std::to_string(static_cast<int>(path));
}

// Without a mask cache, and with one shared by every call of the test, so that entries
// of other shapes, windows and boundaries sit in it (it must never hand out theirs).
TEST(CsanAttention, MatchesNaiveEquationsWithGradients) {
  CsanMaskCache cache(4);
  for (const CsanWindowCase& c : kCases)
    for (HeadBoundary boundary : {HeadBoundary::Truncate, HeadBoundary::Wrap, HeadBoundary::Authors}) {
      if (boundary != HeadBoundary::Truncate && c.n + 1 > c.heads) continue;
      Inputs in = random_inputs(c.heads, c.t, c.lengths);
      Result expected = with_gradients(in, [&] { return naive_2d(in, c.m, c.n, boundary); });
      for (CsanMaskCache* masks : {static_cast<CsanMaskCache*>(nullptr), &cache})
        for (CsanPath path : {CsanPath::Dense, CsanPath::Banded, CsanPath::Auto})
          expect_results_close(with_gradients(in, [&] { return run(in, c.m, c.n, boundary, path, false, masks); }),
                               expected, name(c, boundary, path) + (masks ? " cached" : ""));
    }
  EXPECT_GT(cache.hits(), 0u);  // Auto repeats Dense or Banded
}

// Consecutive batches of other lengths, other padding, or the same mask tensor changed
// in place must not reuse a wrong bias; the same padding (even another tensor) does.
TEST(CsanAttention, MaskCacheReusesOnlyMatchingPadding) {
  CsanMaskCache cache;
  torch::NoGradGuard no_grad;
  auto check = [&](const Inputs& in, CsanPath path, size_t expected_hits, const std::string& what) {
    auto fresh = run(in, 4, 2, HeadBoundary::Truncate, path);
    auto cached = run(in, 4, 2, HeadBoundary::Truncate, path, false, &cache);
    EXPECT_TRUE(torch::allclose(cached, fresh, 1e-6, 1e-6)) << what;
    EXPECT_EQ(cache.hits(), expected_hits) << what;
  };
  // Head tables (keys, values) and the bias: 3 misses on the first call, then hits.
  Inputs a = random_inputs(4, 12, {12, 7, 3});
  check(a, CsanPath::Dense, 0, "first call");
  check(a, CsanPath::Dense, 3, "same mask tensor");
  Inputs longer = random_inputs(4, 20, {20, 7, 3});
  check(longer, CsanPath::Dense, 5, "longer batch: tables hit, bias misses");
  check(longer, CsanPath::Banded, 7, "banded blocks: bias misses");
  Inputs other_padding = random_inputs(4, 12, {12, 9, 3});
  check(other_padding, CsanPath::Dense, 9, "same shape, other padding: bias misses");
  Inputs more_sentences = random_inputs(4, 12, {12, 7, 3, 12});
  check(more_sentences, CsanPath::Dense, 11, "one more sentence: bias misses");
  Inputs equal_copy = a;
  equal_copy.pad = a.pad.clone();
  check(equal_copy, CsanPath::Dense, 14, "equal padding in another tensor: all hit");
  a.pad[1][6] = true;  // in place: the cached bias for this tensor is stale
  check(a, CsanPath::Dense, 16, "mask changed in place: bias misses");
  EXPECT_EQ(cache.misses(), 8u);
  // Causal, decoding step by step: every step's window has its own geometry.
  Inputs steps = random_inputs(4, 9, {9});
  steps.pad = torch::Tensor();
  auto full = run(steps, 4, 2, HeadBoundary::Wrap, CsanPath::Dense, true);
  for (int64_t step = 0; step < 9; ++step) {
    CsanCall call;
    call.causal = true;
    call.query_offset = step;
    call.masks = &cache;
    auto out = csan_attention(steps.q.narrow(2, step, 1), steps.k.narrow(2, 0, step + 1),
                              steps.v.narrow(2, 0, step + 1), CsanWindow{5, 3, HeadBoundary::Wrap}, call);
    EXPECT_TRUE(torch::allclose(out, full.narrow(2, step, 1), 1e-5, 1e-5)) << "step " << step;
  }
}

TEST(CsanAttention, CausalLeftWindowMatchesNaive) {
  for (const CsanWindowCase& c :
       {CsanWindowCase{4, 0, 2, 9, {9}}, CsanWindowCase{6, 2, 4, 40, {40, 40}}, CsanWindowCase{20, 2, 4, 8, {8}}}) {
    Inputs in = random_inputs(c.heads, c.t, c.lengths);
    Result expected = with_gradients(in, [&] { return naive_2d(in, c.m, c.n, HeadBoundary::Wrap, true); });
    for (CsanPath path : {CsanPath::Dense, CsanPath::Banded})
      expect_results_close(with_gradients(in, [&] { return run(in, c.m, c.n, HeadBoundary::Wrap, path, true); }),
                           expected, name(c, HeadBoundary::Wrap, path) + " causal");
  }
}

TEST(CsanAttention, IncrementalQueryAgreesWithFullCausalRun) {
  Inputs in = random_inputs(4, 30, {30, 30});
  torch::NoGradGuard no_grad;
  for (int64_t n : {0, 2}) {
    torch::Tensor full = run(in, 6, n, HeadBoundary::Truncate, CsanPath::Dense, true);
    for (int64_t step : {0, 1, 5, 29}) {
      CsanCall call;
      call.causal = true;
      call.query_offset = step;
      auto prefix_k = in.k.narrow(2, 0, step + 1), prefix_v = in.v.narrow(2, 0, step + 1);
      auto out = csan_attention(in.q.narrow(2, step, 1), prefix_k, prefix_v, CsanWindow{7, n + 1}, call);
      EXPECT_TRUE(torch::allclose(out, full.narrow(2, step, 1), 1e-5, 1e-5)) << "step " << step << " N=" << n;
    }
  }
}

TEST(CsanAttention, TwoDimensionalWithOneHeadIsOneDimensional) {
  for (const CsanWindowCase& c : {CsanWindowCase{4, 0, 3, 12, {12, 5}}, CsanWindowCase{10, 0, 2, 40, {40, 9}}}) {
    Inputs in = random_inputs(c.heads, c.t, c.lengths);
    Result eq456 = with_gradients(in, [&] { return naive_1d(in, c.m); });
    for (HeadBoundary boundary : {HeadBoundary::Truncate, HeadBoundary::Wrap, HeadBoundary::Authors}) {
      expect_results_close(with_gradients(in, [&] { return naive_2d(in, c.m, 0, boundary); }), eq456, "naive 2-D N=0");
      for (CsanPath path : {CsanPath::Dense, CsanPath::Banded})
        expect_results_close(with_gradients(in, [&] { return run(in, c.m, 0, boundary, path); }), eq456,
                             name(c, boundary, path));
    }
  }
}

// A window covering the sentence is vanilla scaled dot-product attention.
TEST(CsanAttention, WholeSentenceWindowIsVanillaAttention) {
  Inputs in = random_inputs(4, 9, {9, 5});
  torch::NoGradGuard no_grad;
  auto scores = torch::matmul(in.q, in.k.transpose(-2, -1)).masked_fill(in.pad.view({2, 1, 1, 9}), -INFINITY);
  auto vanilla = torch::matmul(torch::softmax(scores, -1), in.v);
  auto real = in.pad.logical_not().view({2, 1, 9, 1}).expand({2, 4, 9, 5});
  for (CsanPath path : {CsanPath::Dense, CsanPath::Banded}) {
    auto out = run(in, 16, 0, HeadBoundary::Truncate, path);
    EXPECT_TRUE(torch::allclose(out.masked_select(real), vanilla.masked_select(real), 1e-6, 1e-6));
  }
  // Without padding, everywhere.
  Inputs full = random_inputs(4, 9, {9, 9});
  auto plain = torch::matmul(torch::softmax(torch::matmul(full.q, full.k.transpose(-2, -1)), -1), full.v);
  EXPECT_TRUE(torch::allclose(run(full, 30, 0, HeadBoundary::Truncate, CsanPath::Dense), plain, 1e-6, 1e-6));
}

// The first author's formulation (Context-Aware-SAN, attention_conv.py), restated with
// tensor ops: keys of heads rolled by +-1 (wrapping), values shifted with the edge head
// repeated, a band of +-5 positions, one softmax over the three copies.
TEST(CsanAttention, AuthorsBoundaryReproducesTheirFormulation) {
  Inputs in = random_inputs(4, 16, {16, 16}, 6, 5);
  in.pad = torch::Tensor();
  torch::NoGradGuard no_grad;
  using torch::indexing::Slice;
  auto k = in.k, v = in.v;
  auto keys_left = torch::cat({k.index({Slice(), Slice(-1)}), k.index({Slice(), Slice(0, -1)})}, 1);
  auto keys_right = torch::cat({k.index({Slice(), Slice(1)}), k.index({Slice(), Slice(0, 1)})}, 1);
  auto values_left = torch::cat({v.index({Slice(), Slice(0, 1)}), v.index({Slice(), Slice(0, -1)})}, 1);
  auto values_right = torch::cat({v.index({Slice(), Slice(1)}), v.index({Slice(), Slice(-1)})}, 1);
  auto keys = torch::cat({keys_left, k, keys_right}, -2), values = torch::cat({values_left, v, values_right}, -2);
  auto band = torch::ones({16, 16}).triu(-5).tril(5);
  auto bias = ((1.0 - band) * -1e9).repeat({1, 3});
  auto theirs = torch::matmul(torch::softmax(torch::matmul(in.q, keys.transpose(-2, -1)) + bias, -1), values);
  for (CsanPath path : {CsanPath::Dense, CsanPath::Banded})
    EXPECT_TRUE(torch::allclose(run(in, 10, 2, HeadBoundary::Authors, path), theirs, 1e-5, 1e-5));
  // And it differs from wrap exactly at the edge heads.
  auto wrap = run(in, 10, 2, HeadBoundary::Wrap, CsanPath::Dense);
  EXPECT_TRUE(torch::allclose(wrap.narrow(1, 1, 2), theirs.narrow(1, 1, 2), 1e-5, 1e-5));
  EXPECT_FALSE(torch::allclose(wrap.narrow(1, 0, 1), theirs.narrow(1, 0, 1), 1e-3, 1e-3));
  EXPECT_FALSE(torch::allclose(wrap.narrow(1, 3, 1), theirs.narrow(1, 3, 1), 1e-3, 1e-3));
}

TEST(CsanAttention, HeadAreaTables) {
  auto area = head_area(4, 3, HeadBoundary::Authors);
  EXPECT_TRUE(torch::equal(area.key_heads, torch::tensor({3, 0, 1, 0, 1, 2, 1, 2, 3, 2, 3, 0}).view({4, 3})));
  EXPECT_TRUE(torch::equal(area.value_heads, torch::tensor({0, 0, 1, 0, 1, 2, 1, 2, 3, 2, 3, 3}).view({4, 3})));
  EXPECT_TRUE(area.all_exist);
  auto truncated = head_area(4, 3, HeadBoundary::Truncate);
  EXPECT_FALSE(truncated.all_exist);
  EXPECT_TRUE(torch::equal(truncated.exists.to(torch::kLong),
                           torch::tensor({0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0}).view({4, 3})));
  EXPECT_THROW(head_area(2, 3, HeadBoundary::Wrap), csan::Error);
  EXPECT_THROW(head_area(4, 2, HeadBoundary::Truncate), csan::Error);
  EXPECT_NO_THROW(head_area(2, 5, HeadBoundary::Truncate));
  EXPECT_EQ(parse_head_boundary("authors"), HeadBoundary::Authors);
  EXPECT_THROW(parse_head_boundary("clamp"), csan::Error);
}

TEST(CsanAttention, PaddingNeverLeaksAndNothingIsNaN) {
  Inputs in = random_inputs(4, 40, {40, 3, 1});
  for (CsanPath path : {CsanPath::Dense, CsanPath::Banded}) {
    Result r = with_gradients(in, [&] { return run(in, 10, 2, HeadBoundary::Truncate, path); });
    EXPECT_FALSE(r.out.isnan().any().item<bool>());
    EXPECT_FALSE(r.dk.isnan().any().item<bool>());
    // Changing padded keys/values changes no real output.
    Inputs other = in;
    other.k = in.k.detach().clone(), other.v = in.v.detach().clone();
    other.k[1].narrow(1, 3, 37).normal_(), other.v[1].narrow(1, 3, 37).normal_();
    torch::NoGradGuard no_grad;
    auto changed = run(other, 10, 2, HeadBoundary::Truncate, path);
    EXPECT_TRUE(torch::allclose(changed[1].narrow(1, 0, 3), r.out[1].narrow(1, 0, 3), 1e-6, 1e-6));
  }
}

// The measured crossover (bench-csan --attention), proportional to the window.
TEST(CsanAttention, AutomaticCrossoverFollowsTheWindow) {
  EXPECT_EQ(automatic_banded_from_length(CsanWindow{11, 1}), 176);
  EXPECT_EQ(automatic_banded_from_length(CsanWindow{11, 3}), 99);
  EXPECT_EQ(automatic_banded_from_length(CsanWindow{5, 3}), 45);
}

TEST(CsanAttention, HalfPrecisionScoresKeepTheirDtype) {
  Inputs in = random_inputs(4, 20, {20, 11});
  torch::NoGradGuard no_grad;
  auto expected = run(in, 6, 2, HeadBoundary::Truncate, CsanPath::Dense);
  for (CsanPath path : {CsanPath::Dense, CsanPath::Banded}) {
    CsanCall call;
    call.key_padding_mask = in.pad;
    call.path = path;
    auto out = csan_attention(in.q.to(torch::kBFloat16), in.k.to(torch::kBFloat16), in.v.to(torch::kBFloat16),
                              CsanWindow{7, 3}, call);
    EXPECT_EQ(out.scalar_type(), torch::kBFloat16);
    EXPECT_LT((out.to(torch::kFloat) - expected).abs().max().item<float>(), 0.1);
  }
}

}  // namespace
