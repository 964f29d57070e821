// Resampling mechanics with a small stand-in metric (accuracy = 100 * correct / total):
// exact and numpy means, bootstrap sums in float32 over numpy's index matrix, the paired
// tests' p-value rules, and independence from the thread count. The real metrics are
// checked against sacreBLEU's numbers in tests/cli/score_test.cpp (api_confidence and the
// paired-test vectors).
#include "toolkit/scoring/resampling.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "toolkit/core/error.h"
#include "toolkit/scoring/numpy_rng.h"

namespace csan::scoring {
namespace {

class Accuracy : public Metric {
 public:
  std::string name() const override { return "ACC"; }
  std::vector<SignatureField> signature_fields() const override { return {}; }
  std::vector<Stats> segment_stats(const std::vector<std::string>&,
                                   const std::vector<std::vector<std::string>>&) const override {
    return {};
  }
  double score(const Stats& sum) const override { return sum[1] > 0 ? 100.0 * sum[0] / sum[1] : 0.0; }
  double score_float32(const std::vector<float>& sum) const override {
    return sum[1] > 0 ? 100.0 * static_cast<double>(sum[0] / sum[1]) : 0.0;
  }
  bool integer_stats() const override { return true; }
};

std::vector<Stats> segments_from(const std::vector<std::pair<int, int>>& pairs) {
  std::vector<Stats> out;
  for (auto [correct, total] : pairs) out.push_back({double(correct), double(total)});
  return out;
}

std::vector<Stats> pseudo_random_segments(std::size_t n, unsigned salt) {
  std::vector<Stats> out;
  for (std::size_t i = 0; i < n; ++i) {
    const int total = 5 + static_cast<int>((i * 7 + salt) % 13);
    out.push_back({double((i * 31 + salt * 17) % (total + 1)), double(total)});
  }
  return out;
}

TEST(ExactMean, RoundsTheExactRationalOnce) {
  EXPECT_EQ(exact_mean({0.1, 0.2, 0.3}), 0.2);  // a plain double sum gives 0.20000000000000004
  EXPECT_EQ(exact_mean({1e16, 1.0, -1e16}), 1.0 / 3.0);
  EXPECT_EQ(exact_mean({5.0}), 5.0);
  EXPECT_EQ(exact_mean({1.0, 2.0}), 1.5);
  EXPECT_EQ(exact_mean({-3.0, 1.0}), -1.0);
  EXPECT_EQ(exact_mean({0.0, 0.0}), 0.0);
  EXPECT_EQ(exact_mean({5e-324, 5e-324}), 5e-324);
}

TEST(NumpyMean, UsesEightWayPairwiseSummation) {
  // r0 = 1e16 + 1 rounds to 1e16 (tie to even); r1..r7 = 2 each; the combination adds 14.
  // A sequential sum would lose every 1.
  std::vector<double> values(16, 1.0);
  values[0] = 1e16;
  EXPECT_EQ(numpy_mean(values), (1e16 + 14.0) / 16.0);
  EXPECT_EQ(numpy_mean({1.0, 2.0, 4.0}), 7.0 / 3.0);
}

TEST(ResamplingSeed, ParsesLikePythonInt) {
  EXPECT_EQ(ResamplingSeed::parse("12345").value, 12345u);
  EXPECT_EQ(ResamplingSeed::parse(" 7 ").value, 7u);
  EXPECT_EQ(ResamplingSeed::parse("1_000").value, 1000u);
  EXPECT_EQ(ResamplingSeed::parse("0").value, 0u);
  EXPECT_FALSE(ResamplingSeed::parse("None").value.has_value());
  EXPECT_EQ(ResamplingSeed::parse("None").text, "none");
  EXPECT_EQ(ResamplingSeed::parse("007").paired_text(), "7");
  EXPECT_EQ(ResamplingSeed::parse("007").text, "007");
  EXPECT_FALSE(ResamplingSeed::parse("0").for_paired_systems().has_value());
  EXPECT_THROW(ResamplingSeed::parse("abc"), Error);
  EXPECT_THROW(ResamplingSeed::parse("-1"), Error);
  EXPECT_THROW(ResamplingSeed::parse(""), Error);
}

// The definition in §9.2, written out naively: numpy's index matrix, float32 row sums.
std::vector<double> naive_bootstrap_scores(const Metric& metric, const std::vector<Stats>& segments,
                                           std::size_t n_samples, std::uint64_t seed) {
  NumpyRng rng(seed);
  const auto idx = rng.choice(static_cast<std::uint32_t>(segments.size()), n_samples);
  std::vector<double> scores;
  for (std::size_t k = 0; k < n_samples; ++k) {
    std::vector<float> sum(segments[0].size(), 0.0f);
    for (std::size_t j = 0; j < segments.size(); ++j)
      for (std::size_t c = 0; c < sum.size(); ++c)
        sum[c] += static_cast<float>(segments[idx[k * segments.size() + j]][c]);
    scores.push_back(metric.score_float32(sum));
  }
  return scores;
}

TEST(BootstrapConfidence, MatchesTheDefinitionOnAnyThreadCount) {
  const Accuracy metric;
  const auto segments = pseudo_random_segments(57, 3);
  auto scores = naive_bootstrap_scores(metric, segments, 200, 12345);
  std::sort(scores.begin(), scores.end());
  const double ci = 0.5 * (scores[200 - 5 - 1] - scores[5]);
  const double mean = exact_mean(scores);
  for (int threads : {1, 2, 3}) {
    const Confidence got = bootstrap_confidence(metric, segments, 200, 12345, threads);
    EXPECT_EQ(got.mean, mean) << threads;
    EXPECT_EQ(got.ci, ci) << threads;
  }
  EXPECT_GT(ci, 0.0);
}

TEST(BootstrapConfidence, AnyStatisticsWidthIsSummed) {
  // Widths other than the common metrics' take the generic summation path.
  const Accuracy metric;
  auto segments = pseudo_random_segments(31, 4);
  for (auto& segment : segments) segment.push_back(1.0);
  auto scores = naive_bootstrap_scores(metric, segments, 100, 99);
  std::sort(scores.begin(), scores.end());
  const Confidence got = bootstrap_confidence(metric, segments, 100, 99);
  EXPECT_EQ(got.mean, exact_mean(scores));
  EXPECT_EQ(got.ci, 0.5 * (scores[100 - 2 - 1] - scores[2]));
}

TEST(BootstrapConfidence, OneSegmentHasNoSpread) {
  const Accuracy metric;
  const Confidence got = bootstrap_confidence(metric, segments_from({{3, 4}}), 1000, 12345);
  EXPECT_EQ(got.mean, 75.0);
  EXPECT_EQ(got.ci, 0.0);
}

TEST(PairedBootstrap, IdenticalSystemsAreNeverDifferent) {
  const Accuracy metric;
  const auto segments = pseudo_random_segments(40, 1);
  const auto results = paired_bootstrap({&metric}, {{segments}, {segments}}, 100, ResamplingSeed{});
  ASSERT_EQ(results.size(), 2u);
  EXPECT_FALSE(results[0][0].p_value.has_value());
  // Every resampled delta is 0, so no delta exceeds the real difference 0 and p = 1/(n+1).
  EXPECT_EQ(*results[1][0].p_value, 1.0 / 101.0);
  EXPECT_EQ(*results[1][0].mean, *results[0][0].mean);
  EXPECT_EQ(results[1][0].score, metric.score(sum_stats(segments)));
}

TEST(PairedBootstrap, MatchesTheDefinition) {
  const Accuracy metric;
  const auto base = pseudo_random_segments(50, 1);
  const auto system = pseudo_random_segments(50, 8);
  const std::size_t n = 300;
  const auto b = naive_bootstrap_scores(metric, base, n, 12345);
  const auto s = naive_bootstrap_scores(metric, system, n, 12345);
  std::vector<double> deltas;
  for (std::size_t k = 0; k < n; ++k) deltas.push_back(std::fabs(s[k] - b[k]));
  const double mean_delta = numpy_mean(deltas);
  const double diff = std::fabs(metric.score(sum_stats(base)) - metric.score(sum_stats(system)));
  std::size_t count = 0;
  for (double d : deltas) count += (d - mean_delta > diff);
  auto sorted = s;
  std::sort(sorted.begin(), sorted.end());
  for (int threads : {1, 2}) {
    const auto results = paired_bootstrap({&metric}, {{base}, {system}}, n, ResamplingSeed{}, threads);
    EXPECT_EQ(*results[1][0].p_value, (count + 1.0) / (n + 1.0));
    EXPECT_EQ(*results[1][0].mean, numpy_mean(sorted));
    EXPECT_EQ(*results[1][0].ci, 0.5 * (sorted[n - 7 - 1] - sorted[7]));
  }
}

TEST(PairedApproximateRandomization, MatchesTheDefinition) {
  const Accuracy metric;
  const auto base = pseudo_random_segments(45, 2);
  const auto system = pseudo_random_segments(45, 5);
  const std::size_t trials = 500;
  NumpyRng rng(12345);
  const auto mask = rng.bools(trials, base.size());
  const double diff = std::fabs(metric.score(sum_stats(base)) - metric.score(sum_stats(system)));
  std::size_t count = 0;
  for (std::size_t k = 0; k < trials; ++k) {
    Stats a(2, 0.0), b(2, 0.0);
    for (std::size_t i = 0; i < base.size(); ++i) {
      const bool take_base = mask[k * base.size() + i];
      for (int c = 0; c < 2; ++c) {
        a[c] += take_base ? base[i][c] : system[i][c];
        b[c] += take_base ? system[i][c] : base[i][c];
      }
    }
    count += std::fabs(metric.score(a) - metric.score(b)) > diff;
  }
  for (int threads : {1, 2}) {
    const auto results =
        paired_approximate_randomization({&metric}, {{base}, {system}, {system}}, trials, ResamplingSeed{}, threads);
    EXPECT_EQ(*results[1][0].p_value, (count + 1.0) / (trials + 1.0));
    EXPECT_EQ(*results[2][0].p_value, *results[1][0].p_value);  // the same masks for every system
    EXPECT_FALSE(results[1][0].mean.has_value());
    EXPECT_FALSE(results[0][0].p_value.has_value());
  }
  EXPECT_GT(count, 0u);
  EXPECT_LT(count, trials);
}

TEST(PairedTests, RejectMismatchedInput) {
  const Accuracy metric;
  EXPECT_THROW(paired_bootstrap({&metric}, {{pseudo_random_segments(5, 1)}}, 10, ResamplingSeed{}), Error);
  EXPECT_THROW(paired_bootstrap({&metric}, {{pseudo_random_segments(5, 1)}, {pseudo_random_segments(6, 1)}}, 10,
                                ResamplingSeed{}),
               Error);
}

}  // namespace
}  // namespace csan::scoring
