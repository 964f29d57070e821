// The CoNLL-U reader: words with their UPOS/XPOS, comments ignored, multiword-token
// ranges and empty nodes kept as lines but not words; writing a sentence back with
// other tags changes only that column; malformed input is one error naming file:line.
#include "toolkit/data/conllu.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "toolkit/core/error.h"

namespace fs = std::filesystem;
using namespace csan::data;

namespace {

std::string word(int id, const std::string& form, const std::string& upos, const std::string& xpos) {
  return std::to_string(id) + "\t" + form + "\t" + form + "\t" + upos + "\t" + xpos + "\t_\t0\troot\t_\t_\n";
}

const std::string kTwoSentences = "# newdoc id = d1\n# sent_id = 1\n# text = I don't\n" + word(1, "I", "PRON", "PRP") +
                                  "2-3\tdon't\t_\t_\t_\t_\t_\t_\t_\t_\n" + word(2, "do", "AUX", "VBP") +
                                  word(3, "n't", "PART", "RB") + "3.1\tgo\tgo\tVERB\tVB\t_\t_\t_\t_\t_\n" + "\n" +
                                  "# sent_id = 2\n" + word(1, "Yes", "INTJ", "UH") + word(2, ".", "PUNCT", ".") + "\n";

std::string error_of(const std::string& text) {
  try {
    parse_conllu(text, "f.conllu");
  } catch (const csan::Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Conllu, ReadsWordsAndSkipsRangesEmptyNodesAndComments) {
  const ConllCorpus c = parse_conllu(kTwoSentences, "t.conllu");
  ASSERT_EQ(c.sentences.size(), 2u);
  EXPECT_EQ(c.words(), 5u);
  const auto& first = c.sentences[0];
  ASSERT_EQ(first.words.size(), 3u);
  EXPECT_EQ(first.words[0].form, "I");
  EXPECT_EQ(first.words[1].form, "do");
  EXPECT_EQ(first.words[2].form, "n't");
  EXPECT_EQ(first.words[2].tag(TagColumn::kUpos), "PART");
  EXPECT_EQ(first.words[2].tag(TagColumn::kXpos), "RB");
  EXPECT_EQ(first.lines.size(), 8u);  // 3 comments, 3 words, the range and the empty node
  EXPECT_EQ(first.first_line, 1);
  EXPECT_EQ(c.sentences[1].first_line, 10);
  EXPECT_EQ(c.sentences[1].words[1].form, ".");
}

TEST(Conllu, AcceptsCrlfAMissingFinalBlankLineAndExtraBlankLines) {
  std::string crlf;
  for (char ch : kTwoSentences) crlf += ch == '\n' ? std::string("\r\n") : std::string(1, ch);
  EXPECT_EQ(parse_conllu(crlf, "t").words(), 5u);
  EXPECT_EQ(parse_conllu(kTwoSentences.substr(0, kTwoSentences.size() - 1), "t").words(), 5u);
  EXPECT_EQ(parse_conllu("\n\n" + kTwoSentences + "\n\n", "t").sentences.size(), 2u);
}

TEST(Conllu, RenderWithTagsReplacesOnlyTheChosenColumn) {
  const ConllCorpus c = parse_conllu(kTwoSentences, "t.conllu");
  const std::string upos = render_with_tags(c.sentences[0], TagColumn::kUpos, {"X", "Y", "Z"});
  const std::string expected = "# newdoc id = d1\n# sent_id = 1\n# text = I don't\n" + word(1, "I", "X", "PRP") +
                               "2-3\tdon't\t_\t_\t_\t_\t_\t_\t_\t_\n" + word(2, "do", "Y", "VBP") +
                               word(3, "n't", "Z", "RB") + "3.1\tgo\tgo\tVERB\tVB\t_\t_\t_\t_\t_\n\n";
  EXPECT_EQ(upos, expected);
  const std::string xpos = render_with_tags(c.sentences[1], TagColumn::kXpos, {"A", "B"});
  EXPECT_EQ(xpos, "# sent_id = 2\n" + word(1, "Yes", "INTJ", "A") + word(2, ".", "PUNCT", "B") + "\n");
  // The original tags give the original text back.
  std::string all;
  for (const auto& s : c.sentences) {
    std::vector<std::string> tags;
    for (const auto& w : s.words) tags.push_back(w.upos);
    all += render_with_tags(s, TagColumn::kUpos, tags);
  }
  EXPECT_EQ(all, kTwoSentences);
  EXPECT_THROW(render_with_tags(c.sentences[1], TagColumn::kUpos, {"A"}), csan::Error);
}

TEST(Conllu, MalformedInputIsOneErrorNamingFileAndLine) {
  // Wrong column count.
  EXPECT_EQ(error_of("1\ta\ta\tX\n"), "f.conllu:1: 4 tab-separated columns; a CoNLL-U word line has 10");
  // Bad IDs.
  EXPECT_EQ(error_of(word(1, "a", "X", "Y") + "two\tb\tb\tX\tY\t_\t0\t_\t_\t_\n"),
            "f.conllu:2: bad ID 'two' (expected a word number, N-M or N.M)");
  EXPECT_EQ(error_of(word(1, "a", "X", "Y") + word(3, "b", "X", "Y")),
            "f.conllu:2: word ID 3 where 2 was expected (IDs count from 1)");
  EXPECT_EQ(error_of(word(2, "a", "X", "Y")), "f.conllu:1: word ID 2 where 1 was expected (IDs count from 1)");
  EXPECT_EQ(error_of("3-1\tab\t_\t_\t_\t_\t_\t_\t_\t_\n"),
            "f.conllu:1: bad ID '3-1' (a multiword-token range is N-M with N < M)");
  EXPECT_EQ(error_of("1.x\ta\ta\tX\tY\t_\t0\t_\t_\t_\n"), "f.conllu:1: bad ID '1.x' (an empty node is N.M)");
  // A range bound past long's range (found by fuzzing: std::stol threw out_of_range).
  EXPECT_EQ(error_of("99999999999999999999-2\tab\t_\t_\t_\t_\t_\t_\t_\t_\n"),
            "f.conllu:1: bad ID '99999999999999999999-2' (a multiword-token range is N-M with N < M)");
  // An empty column.
  EXPECT_EQ(error_of("1\t\ta\tX\tY\t_\t0\t_\t_\t_\n"), "f.conllu:1: empty FORM column (write _ for none)");
  // A sentence of comments only, and no sentence at all.
  EXPECT_EQ(error_of(kTwoSentences + "# only a comment\n\n"),
            "f.conllu:14: a sentence without words (only comments, ranges or empty nodes)");
  EXPECT_EQ(error_of(""), "f.conllu: no sentences (not a CoNLL-U file?)");
  EXPECT_EQ(error_of("\n\n"), "f.conllu: no sentences (not a CoNLL-U file?)");
  // Invalid UTF-8.
  EXPECT_NE(error_of(word(1, "a\xff", "X", "Y")).find("f.conllu:1:"), std::string::npos);
}

TEST(Conllu, ReadsFilesAndNamesMissingOnes) {
  const fs::path path = fs::temp_directory_path() / ("csan_conllu_" + std::to_string(::getpid()) + ".conllu");
  std::ofstream(path) << kTwoSentences;
  EXPECT_EQ(read_conllu(path.string()).words(), 5u);
  EXPECT_EQ(read_conllu(path.string()).origin, path.string());
  fs::remove(path);
  try {
    read_conllu(path.string());
    FAIL() << "no error";
  } catch (const csan::Error& e) {
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
  }
}

TEST(Conllu, TagColumnNames) {
  EXPECT_EQ(parse_tag_column("upos"), TagColumn::kUpos);
  EXPECT_EQ(parse_tag_column("xpos"), TagColumn::kXpos);
  EXPECT_EQ(tag_column_name(TagColumn::kXpos), "xpos");
  EXPECT_THROW(parse_tag_column("lemma"), csan::Error);
}

}  // namespace
