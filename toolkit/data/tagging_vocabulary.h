// A tagging vocabulary (words, characters or labels): symbols in index order with their
// counts, <PAD> at 0 and <OOV> at 1 (the convoluted-attention tagger's layout; an unseen
// symbol maps to <OOV>). Unlike fairseq's dict.txt there are no sentence markers and no
// implicit entries: every symbol is written, one "SYMBOL COUNT" line each in index order
// (the count after the last space, so a symbol may contain spaces). Torch-free.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace csan::data {

class TaggingVocabulary {
 public:
  static constexpr int kPad = 0, kOov = 1;
  static constexpr const char* kPadSymbol = "<PAD>";
  static constexpr const char* kOovSymbol = "<OOV>";

  TaggingVocabulary();  // <PAD> and <OOV> only

  // Appends `symbol` with `count` (adds to its count if present); returns its index.
  int add(std::string_view symbol, int64_t count);
  // Index of `symbol`, kOov when absent.
  int index(std::string_view symbol) const;
  bool contains(std::string_view symbol) const { return indices_.count(std::string(symbol)) > 0; }
  const std::string& symbol(int index) const { return symbols_.at(static_cast<size_t>(index)); }
  int64_t count(int index) const { return counts_.at(static_cast<size_t>(index)); }
  int size() const { return static_cast<int>(symbols_.size()); }

  std::string to_text() const;
  void save(const std::string& path) const;  // atomically
  // Throws csan::Error "ORIGIN:LINE: ..." for a malformed line, a duplicate, or a file
  // that does not start with <PAD> and <OOV>.
  static TaggingVocabulary parse(std::string_view text, const std::string& origin);
  static TaggingVocabulary load(const std::string& path);

  bool operator==(const TaggingVocabulary& other) const {
    return symbols_ == other.symbols_ && counts_ == other.counts_;
  }

 private:
  std::vector<std::string> symbols_;
  std::vector<int64_t> counts_;
  std::unordered_map<std::string, int> indices_;
};

// Symbols counted in order of first occurrence, so that sorting by count keeps ties in
// that order (Python's Counter.most_common, which the authors' code uses).
class FirstSeenCounter {
 public:
  void add(const std::string& symbol, int64_t n = 1);
  size_t types() const { return order_.size(); }
  // (symbol, count) by decreasing count, ties in order of first occurrence.
  std::vector<std::pair<std::string, int64_t>> most_common() const;

 private:
  std::vector<std::string> order_;
  std::unordered_map<std::string, int64_t> counts_;
};

}  // namespace csan::data
