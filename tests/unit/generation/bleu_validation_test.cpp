// BLEU validation's statistics are scoring::Bleu's (csan-score's). What data-parallel
// validation relies on: the statistics of disjoint shards, summed, equal those of the whole
// set and score exactly like them, at sacreBLEU 2.6.0's corpus BLEU.
#include <gtest/gtest.h>

#include "../scoring/sacrebleu_vectors.h"
#include "toolkit/generation/bleu_validation.h"
#include "toolkit/scoring/resampling.h"

namespace csan::generation {
namespace {

TEST(BleuValidation, ShardSumsScoreLikeTheWholeCorpus) {
  const std::string dir = scoring::testing::vectors_dir() + "/cases/en500";
  const auto refs = scoring::testing::read_case_lines(dir + "/ref.en", false);
  const auto hyps = scoring::testing::read_case_lines(dir + "/sys_b.en", false);
  const scoring::Bleu bleu(scoring::BleuOptions{});
  auto statistics = [&](size_t begin, size_t end) {
    const std::vector<std::string> h(hyps.begin() + begin, hyps.begin() + end), r(refs.begin() + begin, refs.begin() + end);
    return scoring::sum_stats(bleu.segment_stats(h, {r}));
  };
  const auto whole = statistics(0, hyps.size());
  std::vector<double> summed(whole.size(), 0.0);
  const size_t shards = 3;
  for (size_t s = 0; s < shards; ++s) {
    const auto part = statistics(s * hyps.size() / shards, (s + 1) * hyps.size() / shards);
    for (size_t i = 0; i < summed.size(); ++i) summed[i] += part[i];
  }
  EXPECT_EQ(summed, whole);
  EXPECT_EQ(bleu.score(summed), bleu.score(whole));
  EXPECT_NEAR(bleu.score(whole), 49.43677837740653, 1e-9);  // sacreBLEU, en500 sys_b
}

}  // namespace
}  // namespace csan::generation
