// The vocabulary of a language in fairseq's dict.txt format: one "symbol count" line
// per entry, with <s>=0, <pad>=1, </s>=2, <unk>=3 implicit (never written). Loading,
// saving, finalize() ordering and "madeupword" padding follow fairseq's Dictionary,
// so dictionaries move between the two toolkits unchanged.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace csan::text {

class Dictionary {
 public:
  // A dictionary holding only the four special symbols.
  Dictionary();

  // Reads dict.txt; throws csan::Error "PATH:LINE: ..." on malformed lines or duplicates.
  static Dictionary load(const std::string& path);
  // Same, from the file's contents (checkpoints embed dictionaries); `origin` names it
  // in errors.
  static Dictionary parse(std::string_view contents, const std::string& origin);
  // The dict.txt text: every non-special symbol with its count, in index order (a repeated
  // symbol with #fairseq:overwrite, so that the text parses back to this dictionary).
  std::string to_text() const;
  // Writes to_text() atomically.
  void save(const std::string& path) const;

  // Adds `n` occurrences of `word` (appending it if new); returns its index.
  int add_symbol(std::string_view word, int64_t n = 1);
  // Keeps the non-special symbols with count >= threshold, at most nwords symbols in
  // all (specials included; <= 0 means no limit), most frequent first with ties in
  // code-point order of the symbol, then pads with "madeupwordNNNN" (count 0) until
  // size() is a multiple of padding_factor (> 1).
  void finalize(int64_t threshold = -1, int64_t nwords = -1, int padding_factor = 8);

  // Index of `word`, or unk() if absent.
  int index(std::string_view word) const;
  bool contains(std::string_view word) const;
  // Throws csan::Error naming the dictionary's file for an index outside [0, size()).
  const std::string& symbol(int index) const;
  int64_t count(int index) const { return counts_.at(index); }
  int size() const { return static_cast<int>(symbols_.size()); }
  int nspecial() const { return nspecial_; }

  int bos() const { return 0; }
  int pad() const { return 1; }
  int eos() const { return 2; }
  int unk() const { return 3; }

  // Splits `line` on ASCII whitespace and maps each piece to its index (unk() when
  // absent), appending eos() if asked. `unknown`, when given, counts pieces replaced by
  // unk() (a literal "<unk>" piece is not counted, as in fairseq).
  std::vector<int32_t> encode_line(std::string_view line, bool append_eos = true, int64_t* unknown = nullptr) const;
  std::vector<int32_t> encode(const std::vector<std::string>& pieces, bool append_eos = true,
                              int64_t* unknown = nullptr) const;
  // The symbols of `ids`; stops at the first eos() and drops pad() and bos() when
  // skip_special is set.
  std::vector<std::string> symbols(const std::vector<int64_t>& ids, bool skip_special = true) const;
  // The same symbols joined by spaces.
  std::string to_string(const std::vector<int64_t>& ids, bool skip_special = true) const;

  bool operator==(const Dictionary& other) const { return symbols_ == other.symbols_ && counts_ == other.counts_; }

 private:
  void append_piece(std::string_view piece, std::vector<int32_t>& ids, int64_t* unknown) const;

  std::string origin_;  // the file (or checkpoint) it was parsed from, for messages
  std::vector<std::string> symbols_;
  std::vector<int64_t> counts_;
  std::unordered_map<std::string, int> indices_;
  int nspecial_ = 0;
};

}  // namespace csan::text
