#include "toolkit/text/dictionary.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "toolkit/core/atomic_file.h"
#include "toolkit/core/error.h"

namespace fs = std::filesystem;
using csan::text::Dictionary;

namespace {

std::string temp_file(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("csan_text_dict_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return (dir / name).string();
}

Dictionary counted(const std::vector<std::pair<std::string, int>>& counts) {
  Dictionary d;
  for (const auto& [word, n] : counts) d.add_symbol(word, n);
  return d;
}

TEST(Dictionary, SpecialsComeFirstInFairseqOrder) {
  Dictionary d;
  EXPECT_EQ(d.size(), 4);
  EXPECT_EQ(d.nspecial(), 4);
  EXPECT_EQ(d.symbol(d.bos()), "<s>");
  EXPECT_EQ(d.symbol(d.pad()), "<pad>");
  EXPECT_EQ(d.symbol(d.eos()), "</s>");
  EXPECT_EQ(d.symbol(d.unk()), "<unk>");
  EXPECT_EQ(d.index("<unk>"), 3);
  EXPECT_EQ(d.to_text(), "");  // specials are implicit in dict.txt
}

TEST(Dictionary, AddSymbolAccumulatesCounts) {
  Dictionary d;
  EXPECT_EQ(d.add_symbol("x"), 4);
  EXPECT_EQ(d.add_symbol("y", 5), 5);
  EXPECT_EQ(d.add_symbol("x", 2), 4);
  EXPECT_EQ(d.count(4), 3);
  EXPECT_EQ(d.index("nope"), d.unk());
}

TEST(Dictionary, FinalizeSortsByCountThenSymbolAndPads) {
  Dictionary d = counted({{"b", 3}, {"a", 3}, {"c", 5}, {"d", 1}});
  d.finalize(/*threshold=*/2, /*nwords=*/-1, /*padding_factor=*/8);
  // 4 specials + c, a, b = 7 -> one madeupword makes 8.
  EXPECT_EQ(d.to_text(), "c 5\na 3\nb 3\nmadeupword0000 0\n");
  EXPECT_EQ(d.size(), 8);
  EXPECT_EQ(d.index("c"), 4);
  EXPECT_EQ(d.index("d"), d.unk());
}

TEST(Dictionary, FinalizeNwordsCountsSpecials) {
  Dictionary d = counted({{"b", 3}, {"a", 3}, {"c", 5}, {"d", 1}});
  d.finalize(-1, /*nwords=*/6, 8);
  EXPECT_EQ(d.to_text(), "c 5\na 3\nmadeupword0000 0\nmadeupword0001 0\n");
}

TEST(Dictionary, FinalizeWithoutPadding) {
  Dictionary d = counted({{"d", 1}, {"c", 2}});
  d.finalize(-1, -1, 1);
  EXPECT_EQ(d.size(), 6);
  EXPECT_EQ(d.to_text(), "c 2\nd 1\n");
}

TEST(Dictionary, TiesAreInCodePointOrder) {
  // U+00E9 sorts after 'z' by code point (and by UTF-8 bytes), as in Python's sorted().
  Dictionary d = counted({{"\xC3\xA9", 2},
                          {"z", 2},
                          {"Z", 2},
                          {"\xE2\x96\x81"
                           "a",
                           2}});
  d.finalize(-1, -1, 8);
  EXPECT_EQ(d.to_text(),
            "Z 2\nz 2\n\xC3\xA9 2\n\xE2\x96\x81"
            "a 2\n");
}

TEST(Dictionary, SaveLoadRoundTrip) {
  Dictionary d = counted({{"\xE2\x96\x81the", 10}, {"cat", 4}, {"s", 4}, {".", 7}});
  d.finalize(-1, -1, 8);
  std::string path = temp_file("dict.txt");
  d.save(path);
  EXPECT_EQ(csan::read_file(path), "\xE2\x96\x81the 10\n. 7\ncat 4\ns 4\n");
  Dictionary loaded = Dictionary::load(path);
  EXPECT_TRUE(loaded == d);
  EXPECT_EQ(loaded.index("cat"), 6);
  EXPECT_EQ(loaded.to_text(), d.to_text());
}

TEST(Dictionary, LoadAcceptsOverwriteFlagAndTrailingWhitespace) {
  Dictionary d = Dictionary::parse("a 1\nb 2  \r\na 3 #fairseq:overwrite\n", "mem");
  EXPECT_EQ(d.size(), 7);
  EXPECT_EQ(d.index("a"), 6);
  EXPECT_EQ(d.count(6), 3);
  EXPECT_EQ(d.count(5), 2);
}

TEST(Dictionary, SymbolsMayContainSpaces) {
  Dictionary d = Dictionary::parse("a b 4\n", "mem");
  EXPECT_EQ(d.symbol(4), "a b");
  EXPECT_EQ(d.count(4), 4);
}

TEST(Dictionary, LoadErrorsNameFileAndLine) {
  try {
    Dictionary::parse("a 1\nbroken\n", "d.txt");
    FAIL();
  } catch (const csan::Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("d.txt:2: ", 0), 0u) << e.what();
  }
  try {
    Dictionary::parse("a 1\nb x\n", "d.txt");
    FAIL();
  } catch (const csan::Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("d.txt:2: count 'x'", 0), 0u) << e.what();
  }
  try {
    Dictionary::parse("a 1\nb 1\na 2\n", "d.txt");
    FAIL();
  } catch (const csan::Error& e) {
    EXPECT_NE(std::string(e.what()).find("d.txt:3: duplicate symbol 'a'"), std::string::npos) << e.what();
  }
  // A special symbol listed explicitly is a duplicate too (fairseq refuses it).
  EXPECT_THROW(Dictionary::parse("<unk> 1\n", "d.txt"), csan::Error);
  EXPECT_THROW(Dictionary::load(temp_file("missing.txt")), csan::Error);
}

// csan-preprocess saves a --srcdict it was given; one with an overwritten symbol must
// load again (it used to be written as a plain duplicate, which parse() refuses).
TEST(Dictionary, OverwrittenSymbolsSurviveSaveAndLoad) {
  Dictionary d = Dictionary::parse("a 5\nb 3\na 2 #fairseq:overwrite\n<unk> 1 #fairseq:overwrite\n", "d.txt");
  EXPECT_EQ(d.to_text(), "a 5\nb 3\na 2 #fairseq:overwrite\n<unk> 1 #fairseq:overwrite\n");
  Dictionary back = Dictionary::parse(d.to_text(), "saved");
  EXPECT_EQ(back, d);
  EXPECT_EQ(back.index("a"), 6);
}

// An id from a .bin made with another dictionary: the message names this dictionary.
TEST(Dictionary, OutOfRangeIdNamesTheDictionaryFile) {
  Dictionary d = Dictionary::parse("a 1\nb 1\n", "data/dict.de.txt");
  try {
    d.symbol(6);
    FAIL();
  } catch (const csan::Error& e) {
    EXPECT_EQ(std::string(e.what()), "data/dict.de.txt: token id 6 is not in the dictionary (6 entries)");
  }
  EXPECT_THROW(d.symbol(-1), csan::Error);
}

TEST(Dictionary, EncodeLineAppendsEosAndCountsUnknowns) {
  Dictionary d = counted({{"a", 2}, {"b", 1}});
  d.finalize(-1, -1, 1);
  int64_t unknown = 0;
  EXPECT_EQ(d.encode_line("  a b\tzz <unk> a ", true, &unknown), (std::vector<int32_t>{4, 5, 3, 3, 4, 2}));
  EXPECT_EQ(unknown, 1);  // a literal <unk> is not a replacement
  EXPECT_EQ(d.encode_line("b", false), (std::vector<int32_t>{5}));
  EXPECT_EQ(d.encode_line(""), (std::vector<int32_t>{2}));
  EXPECT_EQ(d.encode({"b", "q"}, true, &unknown), (std::vector<int32_t>{5, 3, 2}));
  EXPECT_EQ(unknown, 2);
}

TEST(Dictionary, ToStringStopsAtEosAndSkipsPadding) {
  Dictionary d = counted({{"a", 2}, {"b", 1}});
  d.finalize(-1, -1, 1);
  EXPECT_EQ(d.to_string({0, 4, 1, 5, 2, 4}), "a b");
  EXPECT_EQ(d.to_string({4, 2}, false), "a </s>");
  EXPECT_THROW(d.symbol(99), csan::Error);
}

}  // namespace
