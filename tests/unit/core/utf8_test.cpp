#include "toolkit/core/utf8.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "toolkit/core/atomic_file.h"
#include "toolkit/core/error.h"
#include "toolkit/core/text_file.h"

namespace {

TEST(Utf8, AcceptsValidAndFindsFirstInvalidByte) {
  EXPECT_TRUE(csan::utf8::is_valid("plain ascii"));
  EXPECT_TRUE(csan::utf8::is_valid("Gr\xc3\xbc\xc3\x9f" "e \xf0\x9f\x98\x80"));
  EXPECT_EQ(csan::utf8::find_invalid("ab\xff"), 2u);
  EXPECT_EQ(csan::utf8::find_invalid("\xc0\xaf"), 0u);          // overlong '/'
  EXPECT_EQ(csan::utf8::find_invalid("x\xed\xa0\x80"), 1u);     // surrogate U+D800
  EXPECT_EQ(csan::utf8::find_invalid("\xf4\x90\x80\x80"), 0u);  // above U+10FFFF
  EXPECT_EQ(csan::utf8::find_invalid("\xe2\x82"), 0u);          // truncated
}

TEST(Utf8, DecodeEncodeRoundTrip) {
  std::string s = "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80";
  std::u32string cps = csan::utf8::decode(s);
  ASSERT_EQ(cps.size(), 4u);
  EXPECT_EQ(cps[1], U'\u00e9');
  EXPECT_EQ(cps[3], U'\U0001F600');
  EXPECT_EQ(csan::utf8::encode(cps), s);
}

TEST(Utf8, PrintableKeepsAMessageOnOneLineAndCutsBetweenCharacters) {
  EXPECT_EQ(csan::utf8::printable("beam"), "beam");
  EXPECT_EQ(csan::utf8::printable("a\nb\t\x7f"), "a\\x0ab\\x09\\x7f");
  EXPECT_EQ(csan::utf8::printable("abcdef", 3), "abc...");
  // "ü" is two bytes: a cut inside it backs off to before it.
  EXPECT_EQ(csan::utf8::printable("a\xc3\xbc" "b", 2), "a...");
  EXPECT_EQ(csan::utf8::printable("a\xc3\xbc" "b", 3), "a\xc3\xbc...");
  EXPECT_EQ(csan::utf8::printable("abc", 3), "abc");
}

TEST(TextFile, InvalidUtf8NamesFileAndLine) {
  std::string path = (std::filesystem::temp_directory_path() / "csan_bad_utf8.txt").string();
  csan::write_file_atomically(path, "good\nalso good\nbad \xff here\n");
  try {
    csan::read_lines(path);
    FAIL() << "expected an error";
  } catch (const csan::Error& e) {
    EXPECT_NE(std::string(e.what()).find(path + ":3: invalid UTF-8"), std::string::npos) << e.what();
  }
}

TEST(TextFile, FinalLineWithoutNewlineCounts) {
  std::string path = (std::filesystem::temp_directory_path() / "csan_lines.txt").string();
  csan::write_file_atomically(path, "a\n\nb");
  auto lines = csan::read_lines(path);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1], "");
  EXPECT_EQ(lines[2], "b");
}

}  // namespace
