// Behaviour of the metric objects beyond the sacreBLEU vectors: bad options and inputs,
// threading equivalence, the float32 scoring used by bootstrap resampling, and the
// SentencePiece tokenizers (with a model trained here, since none can be downloaded).
#include <gtest/gtest.h>

#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include "sacrebleu_vectors.h"
#include "toolkit/core/error.h"
#include "toolkit/scoring/bleu.h"
#include "toolkit/scoring/chrf.h"
#include "toolkit/scoring/metrics.h"
#include "toolkit/scoring/ter.h"
#include "toolkit/scoring/tokenizer_spm.h"

namespace csan::scoring {
namespace {

std::vector<std::string> case_lines(const std::string& file) {
  return testing::read_case_lines(testing::vectors_dir() + "/cases/" + file);
}

std::vector<std::unique_ptr<Metric>> all_metrics() {
  std::vector<std::unique_ptr<Metric>> metrics;
  metrics.push_back(make_bleu({}));
  metrics.push_back(make_chrf({}));
  ChrfOptions chrf_pp;
  chrf_pp.word_order = 2;
  metrics.push_back(make_chrf(chrf_pp));
  metrics.push_back(make_ter({}));
  return metrics;
}

TEST(MetricBehaviour, BadOptionsAreErrors) {
  BleuOptions bleu;
  bleu.smooth_method = "laplace";
  EXPECT_THROW(make_bleu(bleu), Error);
  bleu = {};
  bleu.tokenize = "moses";
  EXPECT_THROW(make_bleu(bleu), Error);
  ChrfOptions chrf;
  chrf.char_order = 0;
  chrf.word_order = 0;
  EXPECT_THROW(make_chrf(chrf), Error);
}

TEST(MetricBehaviour, MismatchedLineCountsAndInvalidUtf8AreErrors) {
  for (const auto& metric : all_metrics()) {
    EXPECT_THROW(metric->segment_stats({"a", "b"}, {{"a"}}), Error) << metric->name();
    EXPECT_THROW(metric->segment_stats({"a\xff"}, {{"a"}}), Error) << metric->name();
  }
}

TEST(MetricBehaviour, ThreadedStatisticsEqualOneLineAtATime) {
  // 3000 lines run on several threads; the same lines one by one run inline.
  std::vector<std::string> refs = case_lines("de500/ref.de"), hyps = case_lines("de500/sys_c.de");
  std::vector<std::string> many_refs, many_hyps;
  for (int copy = 0; copy < 6; ++copy) {
    many_refs.insert(many_refs.end(), refs.begin(), refs.end());
    many_hyps.insert(many_hyps.end(), hyps.begin(), hyps.end());
  }
  for (const auto& metric : all_metrics()) {
    std::vector<Stats> threaded = metric->segment_stats(many_hyps, {many_refs});
    ASSERT_EQ(threaded.size(), many_hyps.size());
    for (size_t i = 0; i < many_hyps.size(); i += 97) {
      EXPECT_EQ(threaded[i], metric->segment_stats({many_hyps[i]}, {{many_refs[i]}})[0]) << metric->name() << i;
    }
  }
}

TEST(MetricBehaviour, Float32ScoresFollowNumpyPromotion) {
  Bleu bleu({});
  Stats bleu_sum = {5854, 5816, 5489, 4741, 4028, 3390, 5854, 5354, 4854, 4354};
  EXPECT_EQ(bleu.score_float32(std::vector<float>(bleu_sum.begin(), bleu_sum.end())), bleu.score(bleu_sum));

  Ter ter({});
  EXPECT_EQ(ter.score_float32({321.0f, 5227.0f}), 100.0 * static_cast<double>(321.0f / 5227.0f));
  EXPECT_NE(ter.score_float32({321.0f, 5227.0f}), ter.score({321.0, 5227.0}));
  EXPECT_EQ(ter.score_float32({3.0f, 0.0f}), 100.0);
  EXPECT_EQ(ter.score_float32({0.0f, 0.0f}), 0.0);

  // One char order: P and R are float32 quotients, the F formula is double.
  ChrfOptions options;
  options.char_order = 1;
  Chrf chrf(options);
  double p = static_cast<double>(7.0f / 9.0f), r = static_cast<double>(7.0f / 11.0f);
  EXPECT_EQ(chrf.score_float32({9.0f, 11.0f, 7.0f}), 100 * ((1 + 4) * p * r / (4 * p + r)));
  EXPECT_NEAR(chrf.score_float32({9.0f, 11.0f, 7.0f}), chrf.score({9.0, 11.0, 7.0}), 1e-5);
}

TEST(MetricBehaviour, IntegerStatisticsFlags) {
  EXPECT_TRUE(make_bleu({})->integer_stats());
  EXPECT_TRUE(make_chrf({})->integer_stats());
  EXPECT_FALSE(make_ter({})->integer_stats());
}

TEST(MetricBehaviour, EmptyReferencesAndHypotheses) {
  auto ter = make_ter({});
  EXPECT_EQ(ter->segment_stats({"a b c"}, {{""}})[0], (Stats{3, 0}));
  EXPECT_EQ(ter->score({3, 0}), 100.0);
  EXPECT_EQ(ter->score({0, 0}), 0.0);
  Bleu bleu({});
  Stats empty = bleu.segment_stats({""}, {{"a b"}})[0];
  EXPECT_EQ(empty, (Stats{0, 2, 0, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(bleu.verbose(empty), "0.0/0.0/0.0/0.0 (BP = 0.000 ratio = 0.000 hyp_len = 0 ref_len = 2)");
}

// chrF's character statistics by direct substring counting, for one reference.
Stats naive_char_stats(const std::u32string& hyp, const std::u32string& ref, int orders) {
  Stats stats;
  for (int n = 1; n <= orders; ++n) {
    std::map<std::u32string, int> h, r;
    for (size_t i = 0; i + n <= hyp.size(); ++i) ++h[hyp.substr(i, n)];
    for (size_t i = 0; i + n <= ref.size(); ++i) ++r[ref.substr(i, n)];
    double hyp_total = 0, ref_total = 0, match = 0;
    for (const auto& [gram, count] : h) {
      hyp_total += count;
      if (r.count(gram)) match += std::min(count, r[gram]);
    }
    for (const auto& [gram, count] : r) ref_total += count;
    stats.insert(stats.end(), {r.empty() ? 0.0 : hyp_total, ref_total, match});
  }
  return stats;
}

TEST(MetricBehaviour, NGramKeysOfEveryWidthCountExactly) {
  // 40 distinct characters need 6 bits: orders up to 10 pack into 64 bits, up to 21
  // into 128, and order 30 falls back to strings of ids.
  uint64_t state = 5;
  auto next = [&]() {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<size_t>(state >> 33);
  };
  for (int trial = 0; trial < 20; ++trial) {
    std::u32string hyp, ref;
    for (int k = 0; k < 120; ++k) hyp.push_back(0x4E00 + next() % 40);
    ref = hyp.substr(10, 50) + hyp.substr(0, 40);
    for (int k = 0; k < 30; ++k) ref.push_back(0x4E00 + next() % 40);
    ChrfOptions options;
    options.char_order = 30;
    Stats stats = Chrf(options).segment_stats({to_utf8(hyp)}, {{to_utf8(ref)}})[0];
    ASSERT_EQ(stats, naive_char_stats(hyp, ref, 30));
  }
}

TEST(MetricBehaviour, BleuWithMoreThan65536DistinctTokens) {
  // Token ids then need 17 bits, so 4-grams use 128-bit keys.
  std::string line;
  for (int k = 0; k < 70000; ++k) line += "w" + std::to_string(k) + " ";
  Bleu bleu({});
  Stats stats = bleu.segment_stats({line}, {{line + "extra"}})[0];
  EXPECT_EQ(stats, (Stats{70000, 70001, 70000, 69999, 69998, 69997, 70000, 69999, 69998, 69997}));
}

// Trains a small unigram model on the de500 references.
std::string train_spm_model(const std::filesystem::path& dir) {
  std::string input = testing::vectors_dir() + "/cases/de500/ref.de";
  std::string prefix = (dir / "tiny").string();
  auto status = sentencepiece::SentencePieceTrainer::Train("--input=" + input + " --model_prefix=" + prefix +
                                                           " --vocab_size=200 --model_type=unigram"
                                                           " --minloglevel=2");
  EXPECT_TRUE(status.ok()) << status.ToString();
  return prefix + ".model";
}

TEST(MetricBehaviour, SentencePieceTokenizers) {
  auto dir = std::filesystem::temp_directory_path() / ("csan-spm-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir / "models");
  std::string model = train_spm_model(dir);

  sentencepiece::SentencePieceProcessor processor;
  ASSERT_TRUE(processor.Load(model).ok());
  const std::string line = "Ein Mann mit einem orangefarbenen Hut.";
  std::vector<std::string> pieces;
  processor.Encode(line, &pieces);
  std::string joined;
  for (const auto& piece : pieces) joined += (joined.empty() ? "" : " ") + piece;
  EXPECT_NE(joined.find("\u2581"), std::string::npos);
  EXPECT_EQ(make_tokenizer("flores200", model)->tokenize_utf8(line), joined);

  BleuOptions options;
  options.tokenize = "spm";
  options.spm_model = model;
  Bleu bleu(options);
  EXPECT_EQ(bleu.signature_fields()[2].value, "flores101");  // spm is flores101's old name
  std::vector<std::string> refs = case_lines("de500/ref.de");
  refs.resize(50);
  std::vector<Stats> stats = bleu.segment_stats(refs, {refs});
  Stats sum(stats[0].size(), 0.0);
  for (const auto& s : stats) {
    for (size_t k = 0; k < s.size(); ++k) sum[k] += s[k];
  }
  EXPECT_NEAR(bleu.score(sum), 100.0, 1e-9);
  EXPECT_GT(sum[0], 400);  // more pieces than words

  // Without a path, the model sacreBLEU would have downloaded is found in $SACREBLEU.
  std::filesystem::copy_file(model, dir / "models" / "sacrebleu_tokenizer_spm.model");
  setenv("SACREBLEU", dir.string().c_str(), 1);
  EXPECT_EQ(make_tokenizer("flores101")->signature(), "flores101");
  EXPECT_THROW(make_tokenizer("flores200"), Error);
  unsetenv("SACREBLEU");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace csan::scoring
