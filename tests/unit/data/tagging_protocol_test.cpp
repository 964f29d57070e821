// The vocabulary protocols and the encoding into chunks, on hand-made CoNLL-U files whose
// vocabularies, chunks and character ids are worked out by hand below (the convatt
// protocol as pdufter/convatt's data/univdep.py builds them).
#include "toolkit/data/tagging_protocol.h"

#include <gtest/gtest.h>

#include "toolkit/core/error.h"

using namespace csan::data;

namespace {

std::string word(int id, const std::string& form, const std::string& upos) {
  return std::to_string(id) + "\t" + form + "\t_\t" + upos + "\t_\t_\t0\t_\t_\t_\n";
}

// train: "the dog runs" / "don't" = "do n't" (a range), "run the"
const std::string kTrain = "# sent_id = 1\n" + word(1, "the", "DET") + word(2, "dog", "NOUN") +
                           word(3, "runs", "VERB") + "\n# sent_id = 2\n1-2\tdon't\t_\t_\t_\t_\t_\t_\t_\t_\n" +
                           word(1, "do", "AUX") + word(2, "n't", "PART") + word(3, "run", "VERB") +
                           word(4, "the", "DET") + "\n";
const std::string kDev = word(1, "the", "DET") + word(2, "cat", "NOUN") + "\n";
const std::string kTest = word(1, "a", "DET") + word(2, "dog", "NOUN") + "\n";

std::vector<TaggedSentence> sentences(const std::string& text) {
  return tagged_sentences(parse_conllu(text, "t.conllu"), TagColumn::kUpos);
}

std::vector<std::string> symbols(const TaggingVocabulary& v) {
  std::vector<std::string> out;
  for (int i = 0; i < v.size(); ++i) out.push_back(v.symbol(i));
  return out;
}

TEST(TaggingProtocol, ConvattVocabulariesAsTheAuthorsCodeBuildsThem) {
  const auto v = convatt_vocabularies(sentences(kTrain), sentences(kDev), sentences(kTest));
  // Word types over train + dev + test: the 3, dog 2, then runs, do, n't, run, cat, a once
  // each (first-occurrence order, train first). 8 types: the most frequent 4 are kept,
  // ties broken by first occurrence.
  EXPECT_EQ(symbols(v.words), (std::vector<std::string>{"<PAD>", "<OOV>", "the", "dog", "runs", "do"}));
  EXPECT_EQ(v.words.count(2), 3);
  EXPECT_EQ(v.words.index("n't"), TaggingVocabulary::kOov);
  EXPECT_EQ(v.words.index("cat"), TaggingVocabulary::kOov);
  // Labels over all splits: DET 4, NOUN 3, VERB 2, AUX 1, PART 1.
  EXPECT_EQ(symbols(v.labels),
            (std::vector<std::string>{"<PAD>", "<OOV>", "DET", "NOUN", "VERB", "AUX", "PART"}));
  // Characters of the training words, then of "</S>", "<S>", "<OOV>", "<PAD>":
  // < 4, > 4, t 3, n 3, h e d o r u S O 2, g s ' / V P A D 1 (ties: first occurrence).
  EXPECT_EQ(symbols(v.chars),
            (std::vector<std::string>{"<PAD>", "<OOV>", "<", ">", "t", "n", "h", "e", "d", "o", "r", "u", "S", "O",
                                      "g", "s", "'", "/", "V", "P", "A", "D"}));
  EXPECT_EQ(v.chars.count(2), 4);  // '<'
}

TEST(TaggingProtocol, ConvattChunksCharactersAndThePaddingWord) {
  const auto v = convatt_vocabularies(sentences(kTrain), sentences(kDev), sentences(kTest));
  const TaggingLayout layout{2, 4, "<PAD>"};
  // "the dog runs" in chunks of at most 2 words: [the dog] [runs], not truncated.
  const auto chunks = encode_sentence(sentences(kTrain)[0], v, layout);
  ASSERT_EQ(chunks.size(), 2u);
  EXPECT_EQ(chunks[0].words, (std::vector<int32_t>{2, 3}));
  EXPECT_EQ(chunks[1].words, (std::vector<int32_t>{4}));
  EXPECT_EQ(chunks[0].labels, (std::vector<int32_t>{2, 3}));
  EXPECT_EQ(chunks[1].labels, (std::vector<int32_t>{4}));
  // Characters: "the" = t h e <PAD>, "dog" = d o g <PAD>; "runs" = r u n s (4 slots).
  EXPECT_EQ(chunks[0].chars, (std::vector<int32_t>{4, 6, 7, 0, 8, 9, 14, 0}));
  EXPECT_EQ(chunks[1].chars, (std::vector<int32_t>{10, 11, 5, 15}));
  // Words are cut to word_chars characters; unknown characters are <OOV> (1).
  EXPECT_EQ(word_char_ids("cathedral", v.chars, 4), (std::vector<int32_t>{1, 1, 4, 6}));
  // The padding word is spelt <PAD>: < P A D > (cut to the 4 slots here), then <PAD>.
  EXPECT_EQ(pad_word_char_ids(layout, v.chars), (std::vector<int32_t>{2, 19, 20, 21}));
  EXPECT_EQ(pad_word_char_ids({2, 7, "<PAD>"}, v.chars), (std::vector<int32_t>{2, 19, 20, 21, 3, 0, 0}));
  EXPECT_EQ(pad_word_char_ids({2, 3, ""}, v.chars), (std::vector<int32_t>{0, 0, 0}));
  // Multi-byte characters are one slot each (code points, as Python's list(str)).
  EXPECT_EQ(word_char_ids("ë€t", v.chars, 3), (std::vector<int32_t>{1, 1, 4}));
}

TEST(TaggingProtocol, ChunkBoundsCutWithoutTruncating) {
  using Bounds = std::vector<std::pair<size_t, size_t>>;
  EXPECT_EQ(chunk_bounds(130, 60), (Bounds{{0, 60}, {60, 120}, {120, 130}}));
  EXPECT_EQ(chunk_bounds(60, 60), (Bounds{{0, 60}}));
  EXPECT_EQ(chunk_bounds(1, 60), (Bounds{{0, 1}}));
  EXPECT_THROW(chunk_bounds(3, 0), csan::Error);
}

TEST(TaggingProtocol, StandardVocabulariesComeFromTrainWithThresholds) {
  const auto train = sentences(kTrain);
  // Threshold 2: only "the" (2 in train) is a word; labels and characters from train.
  const auto v = standard_vocabularies(train, {2, 1});
  EXPECT_EQ(symbols(v.words), (std::vector<std::string>{"<PAD>", "<OOV>", "the"}));
  EXPECT_EQ(symbols(v.labels), (std::vector<std::string>{"<PAD>", "<OOV>", "DET", "VERB", "NOUN", "AUX", "PART"}));
  EXPECT_EQ(v.chars.index("<"), TaggingVocabulary::kOov);  // no special tokens' characters
  EXPECT_EQ(v.chars.symbol(2), "t");
  // Threshold 1 keeps every training word; character threshold 3 keeps t and n.
  const auto all = standard_vocabularies(train, {1, 3});
  EXPECT_EQ(all.words.size(), 2 + 6);
  EXPECT_EQ(symbols(all.chars), (std::vector<std::string>{"<PAD>", "<OOV>", "t", "n"}));
  // A dev tag unseen in train encodes as the <OOV> label.
  const auto dev = encode_sentence(sentences(word(1, "x", "SYM") + "\n")[0], v, {60, 20, ""});
  EXPECT_EQ(dev[0].labels, (std::vector<int32_t>{TaggingVocabulary::kOov}));
}

TEST(TaggingProtocol, VocabularyTextRoundTripsAndRejectsMalformedFiles) {
  const auto v = convatt_vocabularies(sentences(kTrain), sentences(kDev), sentences(kTest));
  EXPECT_EQ(TaggingVocabulary::parse(v.chars.to_text(), "c"), v.chars);
  TaggingVocabulary spaced;
  spaced.add("a b", 3);
  spaced.add(" ", 2);
  EXPECT_EQ(TaggingVocabulary::parse(spaced.to_text(), "s"), spaced);
  EXPECT_EQ(TaggingVocabulary::parse(spaced.to_text(), "s").index("a b"), 2);
  auto error = [](const std::string& text) {
    try {
      TaggingVocabulary::parse(text, "dict.words.txt");
    } catch (const csan::Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(error("<PAD> 0\n<OOV> 0\nthe x\n"), "dict.words.txt:3: expected 'SYMBOL COUNT', got 'the x'");
  EXPECT_EQ(error("<PAD> 0\n<OOV> 0\nthe 1\nthe 2\n"), "dict.words.txt:4: 'the' is listed twice");
  EXPECT_EQ(error("the 1\n"), "dict.words.txt: a tagging vocabulary starts with <PAD> and <OOV>");
  EXPECT_EQ(parse_vocab_protocol("convatt"), VocabProtocol::kConvatt);
  EXPECT_THROW(parse_vocab_protocol("paper"), csan::Error);
}

}  // namespace
