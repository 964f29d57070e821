// The id-based fast path must give exactly what fairseq does with spm_encode's piece
// text: split on spaces, count into dict.txt, look up each piece.
#include "toolkit/data/binarizer.h"

#include <gtest/gtest.h>

#include "toolkit/text/toy_corpus.h"

using namespace csan::data;
using csan::text::Dictionary;
using csan::text::SentencePieceModel;

namespace {

const std::vector<std::string>& toy_lines() {
  static const std::vector<std::string> lines = [] {
    csan::text::ToyCorpusOptions o;
    o.train = 1500;
    o.valid = 10;
    o.test = 10;
    return csan::text::generate_toy_corpus(o).splits[0].source;
  }();
  return lines;
}

const SentencePieceModel& model() {
  static const SentencePieceModel m = [] {
    csan::text::SentencePieceTrainOptions spm;
    spm.vocab_size = 150;
    return SentencePieceModel::train({&toy_lines()}, spm);
  }();
  return m;
}

// Toy lines with characters the model never saw (they come out as surface pieces),
// some of them repeated so they make it into a dictionary.
std::vector<std::string> lines_with_unknowns() {
  std::vector<std::string> lines(toy_lines().begin(), toy_lines().begin() + 400);
  for (size_t i = 0; i < lines.size(); i += 7) lines[i] += " \xE2\x98\x83\xE2\x98\x83 Z";
  for (size_t i = 3; i < lines.size(); i += 11) lines[i] = "\xC3\xBC" + lines[i] + " <unk>";
  lines.push_back("");
  return lines;
}

// fairseq's way: piece text, whitespace split, counted in order of appearance.
Dictionary reference_dictionary(const std::vector<std::string>& lines, int64_t threshold) {
  Dictionary dict;
  for (const auto& line : lines)
    for (const auto& piece : model().encode(line)) dict.add_symbol(piece);
  dict.finalize(threshold, -1, 8);
  return dict;
}

TEST(Binarizer, DictionaryMatchesCountingPieceText) {
  auto lines = lines_with_unknowns();
  auto corpus = encode_corpus(model(), lines, 3);
  EXPECT_FALSE(corpus.surfaces.empty());
  for (int64_t threshold : {0, 3}) {
    Dictionary fast = build_dictionary({&corpus}, {}, threshold, -1, 8);
    Dictionary reference = reference_dictionary(lines, threshold);
    EXPECT_EQ(fast.to_text(), reference.to_text()) << threshold;
  }
  EXPECT_TRUE(build_dictionary({&corpus}, {}, 0, -1, 8).contains("Z"));
}

TEST(Binarizer, IdsAndUnknownCountsMatchPieceLookup) {
  auto lines = lines_with_unknowns();
  // A thresholded dictionary leaves some known pieces out, so both kinds of <unk> occur.
  Dictionary dict = reference_dictionary(std::vector<std::string>(lines.begin(), lines.begin() + 100), 2);
  BinarizedSplit expected;
  for (const auto& line : lines) {
    auto ids = dict.encode(model().encode(line), true, &expected.unknown);
    expected.ids.insert(expected.ids.end(), ids.begin(), ids.end());
    expected.sizes.push_back(static_cast<int32_t>(ids.size()));
  }
  EXPECT_GT(expected.unknown, 0);
  for (int workers : {1, 4}) {
    auto fused = encode_and_binarize(model(), dict, lines, workers);
    EXPECT_EQ(fused.ids, expected.ids);
    EXPECT_EQ(fused.sizes, expected.sizes);
    EXPECT_EQ(fused.unknown, expected.unknown);
    auto staged = binarize_corpus(dict, encode_corpus(model(), lines, workers), {}, workers);
    EXPECT_EQ(staged.ids, expected.ids);
    EXPECT_EQ(staged.sizes, expected.sizes);
    EXPECT_EQ(staged.unknown, expected.unknown);
  }
}

TEST(Binarizer, KeepMaskSkipsLines) {
  std::vector<std::string> lines = {toy_lines()[0], toy_lines()[1], toy_lines()[2]};
  auto corpus = encode_corpus(model(), lines, 2);
  ASSERT_EQ(corpus.lines(), 3u);
  Dictionary dict = build_dictionary({&corpus}, {true, false, true}, 0, -1, 1);
  auto split = binarize_corpus(dict, corpus, {true, false, true}, 2);
  ASSERT_EQ(split.sizes.size(), 2u);
  EXPECT_EQ(split.sizes[0], corpus.length(0) + 1);
  EXPECT_EQ(split.sizes[1], corpus.length(2) + 1);
  EXPECT_EQ(split.unknown, 0);
}

}  // namespace
