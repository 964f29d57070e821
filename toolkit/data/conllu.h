// CoNLL-U (Universal Dependencies) files for tagging: sentences separated by blank
// lines, '#' comment lines, word lines of 10 tab-separated columns. A tagger reads the
// syntactic words (integer IDs): multiword-token ranges ("3-4") and empty nodes ("8.1")
// are kept verbatim for writing the file back but are not words. Torch-free.
// Malformed input (a wrong column count, a bad or out-of-order ID, an empty column, a
// sentence without words, a file without sentences) is a csan::Error "FILE:LINE: ...".
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace csan::data {

// The tag column a tagger predicts: UPOS (4th column) or XPOS (5th).
enum class TagColumn { kUpos, kXpos };
// "upos" / "xpos" -> column; throws csan::Error naming `option` for anything else.
TagColumn parse_tag_column(const std::string& name, const std::string& option = "tag-column");
std::string tag_column_name(TagColumn column);

struct ConllWord {
  std::string form, upos, xpos;
  size_t line = 0;  // index of its line in ConllSentence::lines
  const std::string& tag(TagColumn column) const { return column == TagColumn::kUpos ? upos : xpos; }
};

struct ConllSentence {
  std::vector<std::string> lines;  // every line as read (comments, ranges, empty nodes, words)
  std::vector<ConllWord> words;    // the syntactic words in order
  long first_line = 0;             // 1-based line number of lines[0] in the file
};

struct ConllCorpus {
  std::string origin;  // the file name, for messages
  std::vector<ConllSentence> sentences;
  size_t words() const;
};

// Reads `path` (strict UTF-8). Throws csan::Error naming the file (and line).
ConllCorpus read_conllu(const std::string& path);
// The same from text already read (stdin); `origin` names it in errors.
ConllCorpus parse_conllu(std::string_view text, const std::string& origin);

// The sentence as CoNLL-U text with column `column` of word i replaced by tags[i] (one
// per word), every other line unchanged, then the blank line that ends a sentence.
std::string render_with_tags(const ConllSentence& sentence, TagColumn column, const std::vector<std::string>& tags);

}  // namespace csan::data
