#include "toolkit/scoring/tokenizers.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "sacrebleu_vectors.h"
#include "toolkit/core/error.h"
#include "toolkit/scoring/chrf.h"
#include "toolkit/scoring/regex_steps.h"
#include "toolkit/scoring/ter_normalizer.h"
#include "toolkit/scoring/unicode.h"

namespace csan::scoring {
namespace {

const nlohmann::json& vectors() {
  static const nlohmann::json json = testing::load_vectors("tokenizers.json")["vectors"];
  return json;
}

std::string utf8_of(std::u32string_view s) { return to_utf8(s); }

TEST(Tokenizers, VectorsCoverEveryTokenizer) { EXPECT_GE(vectors().size(), 70u); }

TEST(Tokenizers, BleuTokenizersMatchSacrebleu) {
  const std::pair<const char*, std::u32string (*)(std::u32string_view)> tokenizers[] = {
      {"13a", tokenize_13a}, {"intl", tokenize_intl}, {"zh", tokenize_zh}, {"char", tokenize_char}};
  for (const auto& vector : vectors()) {
    std::u32string input = to_u32(vector["input"].get<std::string>());
    for (const auto& [name, tokenize] : tokenizers) {
      EXPECT_EQ(utf8_of(tokenize(input)), vector[name].get<std::string>()) << name << " on " << vector["input"];
    }
    auto none = make_tokenizer("none");
    EXPECT_EQ(utf8_of((*none)(input)), vector["none"].get<std::string>());
  }
}

TEST(Tokenizers, Utf8FastPathsMatchCodePointVersions) {
  for (const auto& vector : vectors()) {
    const std::string input = vector["input"].get<std::string>();
    EXPECT_EQ(tokenize_13a(std::string_view(input)), vector["13a"].get<std::string>()) << vector["input"];
    EXPECT_EQ(join_split(std::string_view(input)), to_utf8(join_split(to_u32(input)))) << vector["input"];
    EXPECT_EQ(std::string(rstrip(std::string_view(input))), to_utf8(rstrip(to_u32(input)))) << vector["input"];
    std::vector<std::string> words;
    for (auto word : split(std::string_view(input))) words.push_back(std::string(word));
    EXPECT_EQ(words, vector["split"].get<std::vector<std::string>>()) << vector["input"];
    for (const char* name : {"13a", "intl", "zh", "char", "none"}) {
      EXPECT_EQ(make_tokenizer(name)->tokenize_utf8(input), vector[name].get<std::string>()) << name;
    }
  }
}

TEST(Tokenizers, ChrfWordsMatchSacrebleu) {
  for (const auto& vector : vectors()) {
    std::u32string input = to_u32(vector["input"].get<std::string>());
    std::vector<std::string> words;
    for (auto word : chrf_words(input)) words.push_back(utf8_of(word));
    EXPECT_EQ(words, vector["chrf_words"].get<std::vector<std::string>>()) << vector["input"];
  }
  EXPECT_EQ(chrf_words(U"(hi) \"a ok."), (std::vector<std::u32string_view>{U"(hi", U")", U"\"", U"a", U"ok", U"."}));
}

TEST(Tokenizers, TerNormaliserMatchesSacrebleu) {
  struct Variant {
    const char* key;
    TerNormalizerOptions options;
  };
  // Option sets named as in tokenizers.json.
  const Variant variants[] = {
      {"ter_default", {false, false, false, false}},        {"ter_case_sensitive", {true, false, false, false}},
      {"ter_normalized", {false, true, false, false}},      {"ter_normalized_cs", {true, true, false, false}},
      {"ter_normalized_asian", {false, true, false, true}}, {"ter_no_punct", {false, false, true, false}},
      {"ter_no_punct_asian", {false, false, true, true}},   {"ter_all", {true, true, true, true}},
  };
  for (const auto& vector : vectors()) {
    std::u32string input = to_u32(vector["input"].get<std::string>());
    for (const Variant& variant : variants) {
      EXPECT_EQ(utf8_of(ter_normalize(input, variant.options)), vector[variant.key].get<std::string>())
          << variant.key << " on " << vector["input"];
    }
  }
}

TEST(Tokenizers, LowerAndSplitMatchPython) {
  for (const auto& vector : vectors()) {
    std::u32string input = to_u32(vector["input"].get<std::string>());
    EXPECT_EQ(utf8_of(lower(input)), vector["lower"].get<std::string>()) << vector["input"];
    std::vector<std::string> words;
    for (auto word : split(input)) words.push_back(utf8_of(word));
    EXPECT_EQ(words, vector["split"].get<std::vector<std::string>>()) << vector["input"];
  }
}

TEST(Tokenizers, Examples) {
  EXPECT_EQ(utf8_of(tokenize_13a(U"1,000.50 5.")), "1,000.50 5 .");
  EXPECT_EQ(utf8_of(tokenize_13a(U"1...2 a.,b &amp;lt; &amp;quot;")), "1 . . .2 a . , b < & quot ;");
  EXPECT_EQ(utf8_of(tokenize_zh(U"价格5.")), "价 格 5.");
  EXPECT_EQ(utf8_of(tokenize_intl(U"year 2024.")), "year 2024.");
}

TEST(Tokenizers, UnknownOrModelLessTokenizerIsAnError) {
  EXPECT_THROW(make_tokenizer("moses"), Error);
  setenv("SACREBLEU", "/nonexistent-csan-dir", 1);
  try {
    make_tokenizer("flores200");
    FAIL() << "flores200 without a model must fail";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("flores200sacrebleuspm"), std::string::npos) << error.what();
  }
  unsetenv("SACREBLEU");
  EXPECT_THROW(make_tokenizer("spm", "/nonexistent/model.spm"), Error);
  EXPECT_EQ(make_tokenizer("13a")->signature(), "13a");
  // A directory given as the model: named, not SentencePiece's "basic_filebuf::underflow".
  const std::string dir = std::filesystem::temp_directory_path().string();
  try {
    make_tokenizer("spm", dir);
    FAIL() << "a directory as the model must fail";
  } catch (const Error& error) {
    EXPECT_EQ(std::string(error.what()), dir + ": is a directory, expected a file");
  }
}

}  // namespace
}  // namespace csan::scoring

namespace csan::scoring {
namespace {

// The one-loop 13a passes against the four separate passes, on random strings over the
// characters the passes care about (digits, . , - spaces, P13, apostrophe, non-ASCII).
TEST(Tokenizers, StreamingPassesEqualSeparatePasses) {
  const std::u32string alphabet = U"a1.,- &'/\u00e9\u3000\t\u00a0\u201c";
  uint64_t state = 12345;
  auto next = [&]() {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<size_t>(state >> 33);
  };
  for (int trial = 0; trial < 20000; ++trial) {
    std::u32string text;
    size_t length = next() % 12;
    for (size_t k = 0; k < length; ++k) text.push_back(alphabet[next() % alphabet.size()]);
    ASSERT_EQ(mteval_punctuation_steps<char32_t>(text), mteval_punctuation_passes<char32_t>(text)) << to_utf8(text);
    std::string utf8 = to_utf8(text);
    ASSERT_EQ(mteval_punctuation_steps<char>(utf8), mteval_punctuation_passes<char>(utf8)) << utf8;
    // Whole 13a (with its folded split-and-join on ASCII-only whitespace) against the
    // separate passes followed by Python's split and join.
    std::u32string reference = join_split(mteval_punctuation_passes<char32_t>(U" " + text + U" "));
    ASSERT_EQ(tokenize_13a(text), reference) << utf8;
    ASSERT_EQ(tokenize_13a(std::string_view(utf8)), to_utf8(reference)) << utf8;
  }
}

}  // namespace
}  // namespace csan::scoring
