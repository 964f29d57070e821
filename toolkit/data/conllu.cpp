#include "toolkit/data/conllu.h"

#include <algorithm>

#include "toolkit/core/atomic_file.h"
#include "toolkit/core/error.h"
#include "toolkit/core/text_file.h"

namespace csan::data {

namespace {

constexpr size_t kColumns = 10;
constexpr size_t kUposColumn = 3, kXposColumn = 4;
const char* const kColumnNames[kColumns] = {"ID",    "FORM", "LEMMA",  "UPOS", "XPOS",
                                            "FEATS", "HEAD", "DEPREL", "DEPS", "MISC"};

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> fields;
  size_t start = 0;
  while (true) {
    const size_t tab = line.find('\t', start);
    fields.push_back(line.substr(start, tab == std::string::npos ? std::string::npos : tab - start));
    if (tab == std::string::npos) return fields;
    start = tab + 1;
  }
}

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool blank(const std::string& line) { return line.find_first_not_of(" \t") == std::string::npos; }

// Builds sentences line by line, checking each word line where it is read.
class Parser {
 public:
  explicit Parser(std::string origin) { corpus_.origin = std::move(origin); }

  void line(long number, std::string text) {
    if (!text.empty() && text.back() == '\r') text.pop_back();
    check_utf8_line(corpus_.origin, number, text);
    if (blank(text)) {
      finish_sentence();
      return;
    }
    if (current_.lines.empty()) current_.first_line = number;
    current_.lines.push_back(text);
    if (text[0] == '#') return;
    word_line(number, current_.lines.back());
  }

  ConllCorpus finish() {
    finish_sentence();
    if (corpus_.sentences.empty()) throw Error(corpus_.origin + ": no sentences (not a CoNLL-U file?)");
    return std::move(corpus_);
  }

 private:
  [[noreturn]] void fail(long number, const std::string& message) const {
    throw Error::at(corpus_.origin, number, message);
  }

  void word_line(long number, const std::string& text) {
    const std::vector<std::string> fields = split_tabs(text);
    if (fields.size() != kColumns)
      fail(number, std::to_string(fields.size()) + " tab-separated columns; a CoNLL-U word line has 10");
    for (size_t c = 0; c < kColumns; ++c)
      if (fields[c].empty()) fail(number, std::string("empty ") + kColumnNames[c] + " column (write _ for none)");
    const std::string& id = fields[0];
    const size_t dash = id.find('-'), dot = id.find('.');
    if (dash != std::string::npos) {  // multiword token: its words follow on their own lines
      const std::string first = id.substr(0, dash), last = id.substr(dash + 1);
      // At most 9 digits: std::stol would throw past long's range (found by fuzzing).
      if (!all_digits(first) || !all_digits(last) || first.size() > 9 || last.size() > 9 ||
          std::stol(last) <= std::stol(first))
        fail(number, "bad ID '" + id + "' (a multiword-token range is N-M with N < M)");
      if (std::stol(first) != next_id_)
        fail(number, "range '" + id + "' starts at " + first + " but the next word is " + std::to_string(next_id_));
      return;
    }
    if (dot != std::string::npos) {  // empty node (enhanced dependencies): not a word
      if (!all_digits(id.substr(0, dot)) || !all_digits(id.substr(dot + 1)))
        fail(number, "bad ID '" + id + "' (an empty node is N.M)");
      return;
    }
    if (!all_digits(id) || id.size() > 9) fail(number, "bad ID '" + id + "' (expected a word number, N-M or N.M)");
    if (std::stol(id) != next_id_)
      fail(number, "word ID " + id + " where " + std::to_string(next_id_) + " was expected (IDs count from 1)");
    ++next_id_;
    current_.words.push_back({fields[1], fields[kUposColumn], fields[kXposColumn], current_.lines.size() - 1});
  }

  void finish_sentence() {
    if (current_.lines.empty()) return;
    if (current_.words.empty())
      fail(current_.first_line, "a sentence without words (only comments, ranges or empty nodes)");
    corpus_.sentences.push_back(std::move(current_));
    current_ = ConllSentence();
    next_id_ = 1;
  }

  ConllCorpus corpus_;
  ConllSentence current_;
  long next_id_ = 1;
};

}  // namespace

TagColumn parse_tag_column(const std::string& name, const std::string& option) {
  if (name == "upos") return TagColumn::kUpos;
  if (name == "xpos") return TagColumn::kXpos;
  throw Error::for_key(option, "'" + name + "' is not a tag column (upos or xpos)");
}

std::string tag_column_name(TagColumn column) { return column == TagColumn::kUpos ? "upos" : "xpos"; }

size_t ConllCorpus::words() const {
  size_t n = 0;
  for (const auto& s : sentences) n += s.words.size();
  return n;
}

ConllCorpus read_conllu(const std::string& path) { return parse_conllu(read_file(path), path); }

ConllCorpus parse_conllu(std::string_view text, const std::string& origin) {
  Parser parser(origin);
  long number = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    parser.line(++number, std::string(text.substr(start, end - start)));
    start = end + 1;
  }
  return parser.finish();
}

std::string render_with_tags(const ConllSentence& sentence, TagColumn column, const std::vector<std::string>& tags) {
  if (tags.size() != sentence.words.size())
    throw Error("render_with_tags: " + std::to_string(tags.size()) + " tags for " +
                std::to_string(sentence.words.size()) + " words");
  std::vector<std::string> lines = sentence.lines;
  const size_t target = column == TagColumn::kUpos ? kUposColumn : kXposColumn;
  for (size_t w = 0; w < tags.size(); ++w) {
    std::vector<std::string> fields = split_tabs(lines[sentence.words[w].line]);
    fields[target] = tags[w];
    std::string joined;
    for (size_t c = 0; c < fields.size(); ++c) joined += (c ? "\t" : "") + fields[c];
    lines[sentence.words[w].line] = std::move(joined);
  }
  std::string out;
  for (const auto& line : lines) out += line + "\n";
  return out + "\n";
}

}  // namespace csan::data
