// Lexical shortlist: what build() ranks, the file's round trip and its errors, the
// per-batch vocabulary, and a shortlisted decoder against the full one: scores at the
// kept ids equal, -inf elsewhere, in each precision.
#include "toolkit/generation/shortlist.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "tests/support/error_message.h"
#include "tiny_model.h"
#include "toolkit/generation/ensemble_decoder.h"
#include "toolkit/generation/inference_precision.h"
#include "toolkit/generation/sequence_generator.h"

namespace fs = std::filesystem;

namespace {

using namespace csan;
using namespace csan::generation;
using namespace csan::generation::testing;
using csan::testing::message_of;

text::Dictionary dictionary(const std::string& prefix, int words) {
  text::Dictionary d;
  for (int i = 0; i < words; ++i) d.add_symbol(prefix + std::to_string(i), 100 - i);
  return d;
}

std::string temp_file(const std::string& name) {
  return (fs::temp_directory_path() / ("csan_shortlist_test_" + std::to_string(::getpid()) + "_" + name)).string();
}

// Source word s_i translates as target t_i (same id); target 5 is in every sentence.
struct Corpus {
  text::Dictionary src = dictionary("s", 20), tgt = dictionary("t", 20);
  std::vector<std::vector<int64_t>> sources, targets;
  Corpus() {
    for (int64_t n = 0; n < 60; ++n) {
      // b's partner changes between the three sentences of each a, so no two words
      // always occur together.
      const int64_t a = 4 + n % 20, b = 4 + (n / 20 * 7 + n * 3 + 1) % 20;
      sources.push_back({a, b, 2});
      targets.push_back({a, b, 5, 2});
    }
  }
};

TEST(Shortlist, RanksTranslationsAboveWordsThatOccurEverywhereAndKeepsFrequentOnes) {
  Corpus c;
  const auto s = Shortlist::build(c.sources, c.targets, c.src, c.tgt, {3, 1});
  for (int64_t w = 6; w < 24; ++w) {
    ASSERT_FALSE(s.candidates(w).empty());
    EXPECT_EQ(s.candidates(w)[0], w) << "Dice puts the aligned word first for source " << w;
    EXPECT_LE(s.candidates(w).size(), 3u);
  }
  EXPECT_EQ(s.frequent(), std::vector<int64_t>{5}) << "t5 is in every sentence";
  for (const auto& list : {s.candidates(4), s.candidates(10)})
    for (int64_t t : list) EXPECT_GE(t, 4) << "special tokens are never candidates";
}

TEST(Shortlist, VocabularyOfABatchIsTheSortedUnionWithSpecialAndFrequentTokens) {
  Corpus c;
  const auto s = Shortlist::build(c.sources, c.targets, c.src, c.tgt, {1, 1});
  const auto ids = s.vocabulary_for(torch::tensor(std::vector<int64_t>{9, 12, 1, 1}).view({2, 2}), {20});
  EXPECT_TRUE(torch::equal(ids, torch::tensor(std::vector<int64_t>{0, 1, 2, 3, 5, 9, 12, 20})));
}

TEST(Shortlist, FileRoundTripsAndBadFilesAreOneLineErrorsNamingFileAndLine) {
  Corpus c;
  const auto s = Shortlist::build(c.sources, c.targets, c.src, c.tgt, {4, 2});
  const std::string path = temp_file("good");
  s.save(path);
  const auto loaded = Shortlist::load(path, c.src, c.tgt);
  EXPECT_EQ(loaded.frequent(), s.frequent());
  for (int64_t w = 0; w < c.src.size(); ++w) EXPECT_EQ(loaded.candidates(w), s.candidates(w));

  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  const std::string good = text.str();
  auto with = [&](const std::string& contents) {
    const std::string bad = temp_file("bad");
    std::ofstream(bad) << contents;
    return message_of([&] { Shortlist::load(bad, c.src, c.tgt); });
  };
  auto line_of = [&](int n) {
    size_t start = 0;
    for (int i = 1; i < n; ++i) start = good.find('\n', start) + 1;
    return std::make_pair(start, good.find('\n', start) - start);
  };
  EXPECT_NE(with("hello\n").find(":1: not a csan shortlist"), std::string::npos);
  EXPECT_NE(with(good.substr(0, line_of(10).first)).find(":10: ends before the candidates of source id 5"),
            std::string::npos);
  std::string out_of_range = good;
  const auto [start, length] = line_of(6);
  out_of_range.replace(start, length, "1 999");
  EXPECT_NE(with(out_of_range).find(":6: a target id is missing or outside the target dictionary"), std::string::npos);
  EXPECT_NE(with(good + "1 4\n").find("more lines than source ids"), std::string::npos);
  // Another dictionary (same size, other words) is named as such.
  const std::string mismatch = message_of([&] { Shortlist::load(path, c.src, dictionary("u", 20)); });
  EXPECT_NE(mismatch.find("built for another target-dictionary"), std::string::npos) << mismatch;
  EXPECT_EQ(mismatch.find('\n'), std::string::npos);
  EXPECT_NE(message_of([&] { Shortlist::load(temp_file("absent"), c.src, c.tgt); }).find("cannot open"),
            std::string::npos);
  fs::remove(path);
}

// The shortlisted decoder projects onto the kept rows only; its scores there must be the
// full decoder's, handed to the search as those columns only, and every other id must be
// impossible in the whole-vocabulary log-probabilities of step().
// For every decoder: the Transformer's (CSAN's, the locality baselines') and CCN's.
TEST(Shortlist, ShortlistedScoresEqualTheFullScoresAtTheKeptIdsInEachPrecision) {
  torch::NoGradGuard no_grad;
  const auto batch = random_sources(4, 9);
  const auto kept = torch::tensor(std::vector<int64_t>{0, 1, 2, 3, 6, 7, 11, 15, 23});
  for (const std::string arch : {"transformer_tiny", "ccn_tiny"})
    for (const nn::Precision p : {nn::Precision::fp32, nn::Precision::bf16, nn::Precision::int8}) {
      SCOPED_TRACE(arch);
      const std::string precision = nn::precision_name(p);
      auto model = tiny_model(21, 3.0, arch);
      convert_for_inference(*model, InferencePrecision{p, {}});
      EnsembleDecoder full({model}), shortlisted({model}), stepped({model});
      shortlisted.set_output_vocabulary(kept, kVocab);
      stepped.set_output_vocabulary(kept, kVocab);
      full.start(batch.tokens, batch.lengths, 1);
      shortlisted.start(batch.tokens, batch.lengths, 1);
      stepped.start(batch.tokens, batch.lengths, 1);
      auto prefix = torch::full({4, 1}, kEos, torch::kLong);
      for (int64_t t = 0; t < 5; ++t) {
        // The search's scores: the kept columns only, labelled with their ids.
        const auto a = full.step_scores(prefix).scores;
        const auto compact = shortlisted.step_scores(prefix);
        ASSERT_TRUE(compact.ids.defined());
        EXPECT_TRUE(torch::equal(compact.ids, kept));
        ASSERT_EQ(compact.scores.sizes(), (std::vector<int64_t>{4, kept.size(0)}));
        EXPECT_TRUE(torch::allclose(compact.scores, a.index_select(1, kept), 1e-5, 1e-4)) << precision << " step " << t;
        // step(): log-probabilities over the whole vocabulary, -inf at the other ids.
        const auto b = stepped.step(prefix);
        ASSERT_EQ(b.sizes(), a.sizes());
        EXPECT_TRUE(
            torch::allclose(b.index_select(1, kept), torch::log_softmax(a.index_select(1, kept), 1), 1e-5, 1e-4))
            << precision << " step " << t;
        auto others = torch::ones({kVocab}, torch::kBool);
        others.index_fill_(0, kept, false);
        EXPECT_TRUE(
            b.index({torch::indexing::Slice(), others}).eq(-std::numeric_limits<float>::infinity()).all().item<bool>());
        const auto next = kept.index_select(0, compact.scores.argmax(1));
        prefix = torch::cat({prefix, next.unsqueeze(1)}, 1);
      }
    }
}

// The shortlist reaches the decoder as an argument, in each search's incremental state:
// a decode whose state carries one scores its ids only, while the same model's decode with
// another state (another search, on the same thread) scores the whole vocabulary.
TEST(Shortlist, TheDecoderScoresTheShortlistItsStateCarries) {
  torch::NoGradGuard no_grad;
  const auto batch = random_sources(2, 5);
  const auto kept = torch::tensor(std::vector<int64_t>{0, 2, 5, 9});
  auto model = tiny_model(21);
  const auto encoder_out = model->encode_tokens(batch.tokens, batch.lengths);
  const auto prefix = torch::full({2, 1}, kEos, torch::kLong);
  nn::IncrementalState shortlisted, whole;
  shortlisted.set_output_vocabulary(std::make_shared<nn::OutputVocabulary>(kept));
  const auto a = model->decode(prefix, encoder_out, &shortlisted);
  const auto b = model->decode(prefix, encoder_out, &whole);
  ASSERT_EQ(a.size(-1), kept.size(0));
  ASSERT_EQ(b.size(-1), kVocab);
  EXPECT_TRUE(torch::allclose(a, b.index_select(-1, kept), 1e-5, 1e-5));
  EXPECT_EQ(model->decode(prefix, encoder_out).size(-1), kVocab);
}

// The search over a shortlist's columns (compact) finds what the search over the whole
// vocabulary with the other ids at -inf finds: the same tokens, scores to rounding, with every rule that names ids (min
// length, <unk> penalty, no-repeat n-grams, forced prefixes, the length limit) and for sampling with a seed.
TEST(Shortlist, SearchOverTheShortlistsColumnsEqualsTheSearchOverTheWholeVocabulary) {
  torch::NoGradGuard no_grad;
  const auto batch = random_sources(5, 31);
  const auto kept = torch::tensor(std::vector<int64_t>{0, 1, 2, 3, 4, 6, 7, 9, 11, 12, 15, 18, 23});
  auto model = tiny_model(8);
  SearchOptions beam;
  beam.beam = 4;
  beam.nbest = 4;
  beam.min_len = 3;
  beam.unkpen = 0.5;
  beam.no_repeat_ngram_size = 2;
  beam.max_len_b = 7;
  beam.prefix_size = 1;
  SearchOptions sampling = beam;
  sampling.sampling = true;
  sampling.sampling_topk = 5;
  sampling.prefix_size = 0;
  sampling.seed = 17;
  const torch::Tensor forced = torch::tensor(std::vector<int64_t>{7, 9, 4, 23, 11}).view({5, 1});
  for (const auto& options : {beam, sampling}) {
    SequenceGenerator compact({model}, options), whole({model}, options);
    compact.set_output_vocabulary(kept, kVocab, ShortlistScores::compact);
    whole.set_output_vocabulary(kept, kVocab, ShortlistScores::whole_vocabulary);
    const auto prefix = options.prefix_size > 0 ? forced : torch::Tensor();
    const auto a = compact.generate(batch.tokens, batch.lengths, prefix);
    const auto b = whole.generate(batch.tokens, batch.lengths, prefix);
    ASSERT_EQ(a.size(), b.size());
    for (size_t s = 0; s < a.size(); ++s) {
      ASSERT_EQ(a[s].size(), b[s].size()) << "sentence " << s;
      ASSERT_FALSE(a[s].empty());
      for (size_t h = 0; h < a[s].size(); ++h) {
        EXPECT_EQ(a[s][h].tokens, b[s][h].tokens) << "sentence " << s << " hypothesis " << h;
        // The log-sum-exp runs over 13 columns instead of 24 (11 of them -inf): its vector
        // lanes add in another order, so scores may differ in the last bit.
        ASSERT_EQ(a[s][h].positional_scores.size(), b[s][h].positional_scores.size());
        for (size_t t = 0; t < a[s][h].positional_scores.size(); ++t)
          EXPECT_NEAR(a[s][h].positional_scores[t], b[s][h].positional_scores[t], 1e-5);
        EXPECT_NEAR(a[s][h].score, b[s][h].score, 1e-5);
        for (int64_t token : a[s][h].tokens)
          EXPECT_TRUE(kept.eq(token).any().item<bool>()) << token << " is not in the shortlist";
      }
      if (options.prefix_size > 0) {
        EXPECT_EQ(a[s][0].tokens[0], forced[s][0].item<int64_t>());
      }
    }
  }
}

}  // namespace
