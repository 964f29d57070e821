// The trainer's BLEU validation statistics against real sacreBLEU 2.6.0 outputs (the
// vectors that also check scoring::Bleu): summed per-segment statistics must equal
// sacreBLEU's counts, totals and lengths, and the score of the sums its corpus BLEU.
// scoring::Bleu itself cannot be linked here (see bleu_validation_statistics.h).
#include <gtest/gtest.h>

#include <set>

#include <nlohmann/json.hpp>

#include "../scoring/sacrebleu_vectors.h"
#include "toolkit/core/error.h"
#include "toolkit/generation/bleu_validation_statistics.h"

namespace csan::generation {
namespace {

struct CorpusCase {
  std::string dir, ref, hyp, tokenize;
  nlohmann::json expected;
};

// The api_corpus BLEU entries with one reference, default options except -tok.
std::vector<CorpusCase> default_bleu_entries() {
  const nlohmann::json cases = scoring::testing::load_vectors("expected.json")["cases"];
  std::vector<CorpusCase> out;
  for (const auto& [name, c] : cases.items()) {
    if (c["refs"].size() != 1 || !c.contains("api_corpus")) continue;
    for (const auto& entry : c["api_corpus"]) {
      if (entry["name"] != "BLEU") continue;
      const auto args = entry["cli_args"].get<std::vector<std::string>>();
      // REF -i HYP -m bleu [-tok X]
      if (args.size() != 5 && !(args.size() == 7 && args[5] == "-tok")) continue;
      const std::string tokenize = args.size() == 7 ? args[6] : "13a";
      if (tokenize == "char") continue;  // not offered for validation
      out.push_back({scoring::testing::vectors_dir() + "/" + c["dir"].get<std::string>(), args[0], args[2], tokenize,
                     entry});
    }
  }
  return out;
}

std::vector<double> corpus_statistics(const BleuStatistics& bleu, const std::vector<std::string>& hyps,
                                      const std::vector<std::string>& refs, size_t begin, size_t end) {
  std::vector<double> sums(kBleuStatisticsSize, 0.0);
  for (size_t i = begin; i < end; ++i) bleu.add(hyps[i], refs[i], sums);
  return sums;
}

TEST(BleuValidationStatistics, SumsAndScoresEqualSacreBleuOnTheVectors) {
  const auto entries = default_bleu_entries();
  ASSERT_GE(entries.size(), 12u) << "expected the de500, en500, edge, tiny and zh_small default entries";
  std::set<std::string> tokenizers_seen;
  for (const auto& e : entries) {
    SCOPED_TRACE(e.dir + " " + e.hyp + " tok " + e.tokenize);
    const auto refs = scoring::testing::read_case_lines(e.dir + "/" + e.ref, false);
    const auto hyps = scoring::testing::read_case_lines(e.dir + "/" + e.hyp, false);
    ASSERT_EQ(refs.size(), hyps.size());
    const BleuStatistics bleu(e.tokenize);
    tokenizers_seen.insert(e.tokenize);
    const auto sums = corpus_statistics(bleu, hyps, refs, 0, hyps.size());
    EXPECT_EQ(sums[0], e.expected["sys_len"].get<double>());
    EXPECT_EQ(sums[1], e.expected["ref_len"].get<double>());
    for (int n = 0; n < kBleuOrder; ++n) {
      EXPECT_EQ(sums[2 + n], e.expected["counts"][n].get<double>()) << "order " << n + 1;
      EXPECT_EQ(sums[2 + kBleuOrder + n], e.expected["totals"][n].get<double>()) << "order " << n + 1;
    }
    EXPECT_NEAR(bleu_from_statistics(sums), e.expected["score"].get<double>(), 1e-9);
  }
  EXPECT_EQ(tokenizers_seen, (std::set<std::string>{"13a", "intl", "zh", "none"}));
}

// What data-parallel validation relies on: statistics of disjoint shards, summed, score
// exactly like the statistics of the whole set.
TEST(BleuValidationStatistics, ShardSumsScoreLikeTheWholeCorpus) {
  const std::string dir = scoring::testing::vectors_dir() + "/cases/en500";
  const auto refs = scoring::testing::read_case_lines(dir + "/ref.en", false);
  const auto hyps = scoring::testing::read_case_lines(dir + "/sys_b.en", false);
  const BleuStatistics bleu("13a");
  const auto whole = corpus_statistics(bleu, hyps, refs, 0, hyps.size());
  std::vector<double> summed(kBleuStatisticsSize, 0.0);
  const size_t shards = 3;
  for (size_t s = 0; s < shards; ++s) {
    const auto part = corpus_statistics(bleu, hyps, refs, s * hyps.size() / shards, (s + 1) * hyps.size() / shards);
    for (size_t i = 0; i < kBleuStatisticsSize; ++i) summed[i] += part[i];
  }
  EXPECT_EQ(summed, whole);
  EXPECT_EQ(bleu_from_statistics(summed), bleu_from_statistics(whole));
  EXPECT_NEAR(bleu_from_statistics(whole), 49.43677837740653, 1e-9);  // sacreBLEU, en500 sys_b
}

TEST(BleuValidationStatistics, SegmentCountsClippedMatches) {
  const BleuStatistics bleu("13a");
  // "the the the" against "the cat": one clipped unigram match of three.
  const auto s = bleu.segment("the the the", "the cat");
  EXPECT_EQ(s, (std::vector<double>{3, 2, 1, 0, 0, 0, 3, 2, 1, 0}));
  // 13a splits the final period off.
  EXPECT_EQ(bleu.segment("a cat.", "a cat .")[2], 3.0);
  EXPECT_EQ(BleuStatistics("none").segment("a cat.", "a cat .")[2], 1.0);
}

TEST(BleuValidationStatistics, DegenerateSumsScoreZero) {
  EXPECT_EQ(bleu_from_statistics(std::vector<double>(kBleuStatisticsSize, 0.0)), 0.0);
  // No match at any order: 0, before any smoothing.
  EXPECT_EQ(bleu_from_statistics({4, 4, 0, 0, 0, 0, 4, 3, 2, 1}), 0.0);
  // Only unigrams possible (one-word hypotheses): higher orders floor the score to ~0.
  EXPECT_LT(bleu_from_statistics({2, 2, 2, 0, 0, 0, 2, 0, 0, 0}), 1e-6);
}

TEST(BleuValidationStatistics, BadInputsAreErrors) {
  EXPECT_THROW(BleuStatistics("char"), Error);
  EXPECT_THROW(bleu_from_statistics({1, 2, 3}), Error);
}

}  // namespace
}  // namespace csan::generation
