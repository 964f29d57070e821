#include "toolkit/text/sentencepiece.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "toolkit/core/error.h"
#include "toolkit/text/toy_corpus.h"

namespace fs = std::filesystem;
using csan::text::SentencePieceModel;
using csan::text::SentencePieceTrainOptions;

namespace {

const csan::text::ToySplit& toy_train() {
  static const csan::text::ToyCorpus corpus = [] {
    csan::text::ToyCorpusOptions o;
    o.train = 3000;
    o.valid = 50;
    o.test = 50;
    return csan::text::generate_toy_corpus(o);
  }();
  return corpus.splits[0];
}

SentencePieceTrainOptions small_options(const std::string& type = "unigram") {
  SentencePieceTrainOptions o;
  o.vocab_size = 300;
  o.model_type = type;
  return o;
}

const SentencePieceModel& joint_model() {
  static const SentencePieceModel model =
      SentencePieceModel::train({&toy_train().source, &toy_train().target}, small_options());
  return model;
}

TEST(SentencePiece, TrainsRequestedVocabularyAndRoundTrips) {
  const auto& model = joint_model();
  EXPECT_EQ(model.vocab_size(), 300);
  for (size_t i = 0; i < 50; ++i) {
    for (const auto* side : {&toy_train().source, &toy_train().target}) {
      const std::string& line = (*side)[i];
      auto pieces = model.encode(line);
      ASSERT_FALSE(pieces.empty());
      for (const auto& p : pieces) EXPECT_EQ(p.find(' '), std::string::npos);
      EXPECT_EQ(pieces[0].rfind("\xE2\x96\x81", 0), 0u) << "first piece starts a word";
      EXPECT_EQ(model.decode(pieces), line);
    }
  }
}

TEST(SentencePiece, TrainingIsDeterministic) {
  auto again = SentencePieceModel::train({&toy_train().source, &toy_train().target}, small_options());
  EXPECT_EQ(again.bytes(), joint_model().bytes());
}

TEST(SentencePiece, SampleSizeAndSeedChooseTheTrainingSentences) {
  auto o = small_options("bpe");
  o.vocab_size = 200;
  o.input_sentence_size = 300;
  o.seed = 1;
  auto a = SentencePieceModel::train({&toy_train().source}, o);
  auto b = SentencePieceModel::train({&toy_train().source}, o);
  EXPECT_EQ(a.bytes(), b.bytes());
  o.seed = 2;
  auto c = SentencePieceModel::train({&toy_train().source}, o);
  EXPECT_NE(a.bytes(), c.bytes());
}

TEST(SentencePiece, AllModelTypesTrain) {
  std::vector<std::string> text(toy_train().source.begin(), toy_train().source.begin() + 1000);
  for (const char* type : {"bpe", "char"}) {
    auto o = small_options(type);
    o.vocab_size = 60;
    auto model = SentencePieceModel::train({&text}, o);
    EXPECT_EQ(model.decode(model.encode(text[7])), text[7]) << type;
  }
  // A word model never splits a word: every piece starts one, and the pieces spell the
  // sentence (unknown words come back as their surface text).
  auto word_options = small_options("word");
  word_options.vocab_size = 60;
  auto word_model = SentencePieceModel::train({&text}, word_options);
  std::string spelled, expected = "\xE2\x96\x81";
  for (char c : text[7]) expected += c == ' ' ? std::string("\xE2\x96\x81") : std::string(1, c);
  for (const auto& piece : word_model.encode(text[7])) {
    EXPECT_EQ(piece.rfind("\xE2\x96\x81", 0), 0u) << piece;
    spelled += piece;
  }
  EXPECT_EQ(spelled, expected);
  auto char_model = SentencePieceModel::train({&text}, [] {
    auto o = small_options("char");
    o.vocab_size = 30;
    return o;
  }());
  auto pieces = char_model.encode("ab c");
  EXPECT_EQ(pieces, (std::vector<std::string>{"\xE2\x96\x81", "a", "b", "\xE2\x96\x81", "c"}));
}

TEST(SentencePiece, LoadsFromBytesAndFile) {
  const auto& model = joint_model();
  auto copy = SentencePieceModel::from_bytes(model.bytes());
  const std::string& line = toy_train().target[3];
  EXPECT_EQ(copy.encode(line), model.encode(line));
  fs::path path = fs::temp_directory_path() / ("csan_text_spm_" + std::to_string(::getpid()) + ".model");
  model.save(path.string());
  auto loaded = SentencePieceModel::load(path.string());
  EXPECT_EQ(loaded.bytes(), model.bytes());
  EXPECT_EQ(loaded.encode(line), model.encode(line));
  fs::remove(path);
}

TEST(SentencePiece, BadInputsThrowCsanErrors) {
  EXPECT_THROW(SentencePieceModel::from_bytes("not a model", "ckpt"), csan::Error);
  EXPECT_THROW(SentencePieceModel::load("/nonexistent/spm.model"), csan::Error);
  std::vector<std::string> few = {"a b c", "d e f"};
  EXPECT_THROW(SentencePieceModel::train({&few}, small_options("nonsense")), csan::Error);
  // Far more pieces than the text can give: the message names the option to change.
  try {
    SentencePieceModel::train({&few}, small_options());
    FAIL();
  } catch (const csan::Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("key 'spm-vocab-size': 300 is too large", 0), 0u) << e.what();
  }
  std::vector<std::string> none;
  EXPECT_THROW(SentencePieceModel::train({&none}, small_options()), csan::Error);
}

TEST(SampleIndices, UniformSubsetInIncreasingOrder) {
  auto all = csan::text::sample_indices(10, 0, 1);
  EXPECT_EQ(all.size(), 10u);
  auto some = csan::text::sample_indices(1000, 100, 7);
  ASSERT_EQ(some.size(), 100u);
  EXPECT_TRUE(std::is_sorted(some.begin(), some.end()));
  EXPECT_EQ(std::set<size_t>(some.begin(), some.end()).size(), 100u);
  EXPECT_LT(some.back(), 1000u);
  EXPECT_EQ(some, csan::text::sample_indices(1000, 100, 7));
  EXPECT_NE(some, csan::text::sample_indices(1000, 100, 8));
  // Every index gets picked sometimes: the draw is not biased to one end.
  std::vector<int> hits(20, 0);
  for (uint64_t seed = 0; seed < 200; ++seed)
    for (size_t i : csan::text::sample_indices(20, 5, seed)) ++hits[i];
  for (int h : hits) EXPECT_GT(h, 20);
}

}  // namespace
