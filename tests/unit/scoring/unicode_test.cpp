#include "toolkit/scoring/unicode.h"

#include <gtest/gtest.h>

#include <map>

#include "sacrebleu_vectors.h"
#include "toolkit/core/error.h"
#include "toolkit/scoring/tokenizers.h"

namespace csan::scoring {
namespace {

const nlohmann::json& tables() {
  static const nlohmann::json json = testing::load_vectors("unicode_tables.json");
  return json;
}

// Every code point, the classes' ranges given as [[first, last], ...].
void expect_class_matches(const nlohmann::json& ranges, bool (*predicate)(char32_t), const char* name) {
  std::vector<bool> expected(0x110000, false);
  for (const auto& range : ranges) {
    for (uint32_t c = range[0].get<uint32_t>(); c <= range[1].get<uint32_t>(); ++c) expected[c] = true;
  }
  int mismatches = 0;
  for (uint32_t c = 0; c < 0x110000; ++c) {
    if (c >= 0xD800 && c <= 0xDFFF) continue;
    if (predicate(c) != expected[c] && ++mismatches <= 5) {
      ADD_FAILURE() << name << " differs at U+" << std::hex << c;
    }
  }
  EXPECT_EQ(mismatches, 0) << name;
}

TEST(Unicode, WhitespaceIsPythonIsspace) {
  std::vector<bool> expected(0x110000, false);
  for (const auto& c : tables()["whitespace"]) expected[c.get<uint32_t>()] = true;
  for (uint32_t c = 0; c < 0x110000; ++c) ASSERT_EQ(is_space(c), expected[c]) << "U+" << std::hex << c;
  EXPECT_FALSE(is_space(0x200B));
}

TEST(Unicode, IntlClassesAreUnicode15) {
  expect_class_matches(tables()["intl_P"], is_punctuation, "\\p{P}");
  expect_class_matches(tables()["intl_S"], is_symbol, "\\p{S}");
  expect_class_matches(tables()["intl_N"], is_number, "\\p{N}");
}

TEST(Unicode, ZhIsolatedSetIncludesTheRangeBug) {
  expect_class_matches(tables()["zh_chinese"], is_zh_isolated, "zh");
  EXPECT_TRUE(is_zh_isolated(0x2014));   // em dash, through the mis-read \u20000 bound
  EXPECT_FALSE(is_zh_isolated(0x20000)); // a real Ext-B ideograph is not isolated
}

TEST(Unicode, LowerMapMatchesPython14PerCodePoint) {
  std::map<uint32_t, std::u32string> expected;
  for (const auto& entry : tables()["lower"]) {
    std::u32string to;
    for (const auto& c : entry[1]) to.push_back(c.get<uint32_t>());
    expected[entry[0].get<uint32_t>()] = to;
  }
  for (uint32_t c = 0; c < 0x110000; ++c) {
    if (c >= 0xD800 && c <= 0xDFFF) continue;
    std::u32string single(1, static_cast<char32_t>(c));
    auto it = expected.find(c);
    std::u32string want = it == expected.end() ? single : it->second;
    ASSERT_EQ(lower(single), want) << "U+" << std::hex << c;
  }
}

TEST(Unicode, FinalSigmaAndDottedCapitalI) {
  EXPECT_EQ(lower(U"ΟΔΟΣ"), U"οδος");
  EXPECT_EQ(lower(U"ΟΔΟΣ ΟΔΟΣ."), U"οδος οδος.");
  EXPECT_EQ(lower(U"Σ"), U"σ");          // no cased letter before it
  EXPECT_EQ(lower(U"ΑΣΑ"), U"ασα");      // cased letter after it
  EXPECT_EQ(lower(U"Α'Σ"), U"α'ς");      // apostrophe is case-ignorable
  EXPECT_EQ(lower(U"İ"), std::u32string(U"i\u0307"));
}

TEST(Unicode, SplitAndStripUsePythonWhitespace) {
  EXPECT_EQ(split(U"  a\u00a0b\u200bc\u3000d\x1f "),
            (std::vector<std::u32string_view>{U"a", U"b\u200bc", U"d"}));
  EXPECT_TRUE(split(U" \t ").empty());
  EXPECT_EQ(rstrip(U" a \u2028"), U" a");
  EXPECT_EQ(strip(U"\u0085 a b \r"), U"a b");
}

TEST(Unicode, InvalidUtf8IsAnError) {
  EXPECT_THROW(to_u32("ab\xff"), Error);
  EXPECT_EQ(to_u32("\xf0\x9f\x98\x80"), std::u32string(U"\U0001F600"));
}

}  // namespace
}  // namespace csan::scoring
