// The fused vocabulary-wide kernels of a beam-search step against LibTorch's composed
// operations (log-sum-exp; log-probabilities + cumulative scores, then topk over K*V).
#include <gtest/gtest.h>

#include <limits>

#include "toolkit/generation/vocab_kernels.h"

namespace {

using namespace csan::generation;

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

TEST(RowLogsumexp, EqualsLibTorchIncludingForbiddenEntriesAndTails) {
  torch::manual_seed(1);
  // 8003 columns: whole 16-wide blocks plus a tail; magnitudes far from 0.
  auto x = torch::randn({5, 8003}) * 6;
  x[1] += 300;
  x[2] -= 300;
  x[3].narrow(0, 0, 8000).fill_(kNegInf);  // only the tail is finite
  x[4].index_put_({torch::randint(8003, {500})}, kNegInf);
  auto got = row_logsumexp(x);
  auto expected = torch::logsumexp(x.to(torch::kDouble), 1).to(torch::kFloat);
  EXPECT_TRUE(torch::allclose(got, expected, 1e-6, 1e-5)) << got - expected;
}

TEST(RowLogsumexp, RowOfMinusInfinityGivesMinusInfinity) {
  auto x = torch::full({2, 20}, kNegInf);
  x[1][7] = 2.5;
  auto got = row_logsumexp(x);
  EXPECT_EQ(got[0].item<float>(), kNegInf);
  EXPECT_FLOAT_EQ(got[1].item<float>(), 2.5f);
}

void expect_same_candidates(const Candidates& a, const Candidates& b) {
  ASSERT_EQ(a.scores.sizes(), b.scores.sizes());
  EXPECT_TRUE(torch::allclose(a.scores, b.scores, 1e-6, 1e-5)) << a.scores << b.scores;
  EXPECT_TRUE(torch::allclose(a.token_lprobs, b.token_lprobs, 1e-6, 1e-5));
  EXPECT_TRUE(torch::equal(a.tokens, b.tokens)) << a.tokens << b.tokens;
  EXPECT_TRUE(torch::equal(a.beams, b.beams)) << a.beams << b.beams;
}

TEST(BestExtensions, EqualReferenceTopkOverBeamsAndTokens) {
  torch::manual_seed(2);
  const int64_t n = 4, k = 3, v = 1037;
  auto scores = torch::randn({n, k, v}) * 3;
  scores.index_put_({torch::randint(n, {200}), torch::randint(k, {200}), torch::randint(v, {200})}, kNegInf);
  auto normalizer = row_logsumexp(scores.view({n * k, v})).view({n, k});
  auto cumulative = torch::randn({n, k}) * 4 - 5;
  cumulative[2][1] = kNegInf;  // a dead beam
  for (bool first : {true, false}) {
    SCOPED_TRACE(first);
    expect_same_candidates(best_extensions(scores, normalizer, cumulative, 2 * k, first),
                           best_extensions_reference(scores, normalizer, cumulative, 2 * k, first));
  }
}

TEST(BestExtensions, FewerFiniteCandidatesThanWidthLeaveMinusInfinity) {
  auto scores = torch::full({1, 2, 40}, kNegInf);
  scores[0][0][17] = -1;
  scores[0][1][3] = -2;
  scores[0][1][39] = -0.5;
  auto normalizer = torch::zeros({1, 2});
  auto cumulative = torch::tensor({{-1.0f, -3.0f}});
  auto c = best_extensions(scores, normalizer, cumulative, 4, false);
  // -1 + -1 = -2 (beam 0, token 17); -3 + -0.5 = -3.5 (beam 1, 39); -3 + -2 = -5 (beam 1, 3)
  EXPECT_TRUE(torch::equal(c.tokens.narrow(1, 0, 3), torch::tensor({{17, 39, 3}})));
  EXPECT_TRUE(torch::equal(c.beams.narrow(1, 0, 3), torch::tensor({{0, 1, 1}})));
  EXPECT_TRUE(torch::allclose(c.scores.narrow(1, 0, 3), torch::tensor({{-2.0f, -3.5f, -5.0f}})));
  EXPECT_EQ(c.scores[0][3].item<float>(), kNegInf);
}

TEST(BestExtensions, NonFloatScoresTakeTheComposedPath) {
  torch::manual_seed(3);
  auto scores = torch::randn({2, 2, 50}, torch::kDouble);
  auto normalizer = torch::logsumexp(scores, 2);
  auto cumulative = torch::zeros({2, 2}, torch::kDouble);
  auto c = best_extensions(scores, normalizer, cumulative, 4, false);
  EXPECT_EQ(c.scores.scalar_type(), torch::kDouble);
  expect_same_candidates(c, best_extensions_reference(scores, normalizer, cumulative, 4, false));
}

}  // namespace
