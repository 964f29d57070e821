#include "toolkit/text/dictionary.h"

#include <algorithm>
#include <cstdio>
#include <numeric>

#include "toolkit/core/atomic_file.h"
#include "toolkit/core/error.h"

namespace csan::text {

namespace {

constexpr const char* kOverwriteFlag = "#fairseq:overwrite";

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

std::string_view rstrip(std::string_view s) {
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

// Splits "word field" at the last space; false when there is none.
bool split_last_field(std::string_view s, std::string_view& word, std::string_view& field) {
  size_t space = s.rfind(' ');
  if (space == std::string_view::npos) return false;
  word = s.substr(0, space);
  field = s.substr(space + 1);
  return true;
}

bool parse_count(std::string_view s, int64_t& out) {
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    bool negative = s[0] == '-';
    s.remove_prefix(1);
    if (!parse_count(s, out)) return false;
    if (negative) out = -out;
    return true;
  }
  if (s.empty() || s.size() > 18) return false;
  out = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    out = out * 10 + (c - '0');
  }
  return true;
}

// Lookups by string_view without allocating on every call.
std::string& lookup_key(std::string_view word) {
  thread_local std::string key;
  key.assign(word.data(), word.size());
  return key;
}

}  // namespace

Dictionary::Dictionary() {
  for (const char* special : {"<s>", "<pad>", "</s>", "<unk>"}) add_symbol(special);
  nspecial_ = size();
}

Dictionary Dictionary::load(const std::string& path) { return parse(read_file(path), path); }

Dictionary Dictionary::parse(std::string_view contents, const std::string& origin) {
  Dictionary dict;
  dict.origin_ = origin;
  long line_number = 0;
  while (!contents.empty()) {
    size_t end = contents.find('\n');
    std::string_view line = contents.substr(0, end);
    contents.remove_prefix(end == std::string_view::npos ? contents.size() : end + 1);
    ++line_number;

    std::string_view word, field;
    if (!split_last_field(rstrip(line), word, field))
      throw Error::at(origin, line_number, "expected '<symbol> <count> [#fairseq:overwrite]'");
    bool overwrite = field == kOverwriteFlag;
    if (overwrite && !split_last_field(word, word, field))
      throw Error::at(origin, line_number, "expected '<symbol> <count> #fairseq:overwrite'");
    int64_t count = 0;
    if (!parse_count(field, count))
      throw Error::at(origin, line_number, "count '" + std::string(field) + "' is not an integer");
    if (dict.contains(word) && !overwrite)
      throw Error::at(origin, line_number,
                      "duplicate symbol '" + std::string(word) +
                          "' (add #fairseq:overwrite to the line to replace the earlier entry)");
    if (overwrite) {
      // fairseq appends a fresh entry and points the symbol at it.
      dict.indices_[std::string(word)] = dict.size();
      dict.symbols_.emplace_back(word);
      dict.counts_.push_back(count);
    } else {
      dict.add_symbol(word, count);
    }
  }
  return dict;
}

std::string Dictionary::to_text() const {
  std::string out;
  // A symbol listed again (loaded with #fairseq:overwrite) keeps its flag, or the saved
  // file would not load back: parse() refuses a plain duplicate, as fairseq does.
  std::unordered_map<std::string_view, bool> seen;
  for (int i = 0; i < nspecial_; ++i) seen[symbols_[i]] = true;
  for (int i = nspecial_; i < size(); ++i) {
    out += symbols_[i];
    out += ' ';
    out += std::to_string(counts_[i]);
    if (!seen.emplace(symbols_[i], true).second) out += std::string(" ") + kOverwriteFlag;
    out += '\n';
  }
  return out;
}

void Dictionary::save(const std::string& path) const { write_file_atomically(path, to_text()); }

int Dictionary::add_symbol(std::string_view word, int64_t n) {
  auto found = indices_.find(lookup_key(word));
  if (found != indices_.end()) {
    counts_[found->second] += n;
    return found->second;
  }
  int index = size();
  indices_.emplace(std::string(word), index);
  symbols_.emplace_back(word);
  counts_.push_back(n);
  return index;
}

void Dictionary::finalize(int64_t threshold, int64_t nwords, int padding_factor) {
  if (nwords <= 0) nwords = size();
  // Most frequent first; equal counts in code-point (= UTF-8 byte) order of the symbol.
  std::vector<int> order(symbols_.size() - nspecial_);
  std::iota(order.begin(), order.end(), nspecial_);
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    if (counts_[a] != counts_[b]) return counts_[a] > counts_[b];
    return symbols_[a] < symbols_[b];
  });

  std::vector<std::string> symbols(symbols_.begin(), symbols_.begin() + nspecial_);
  std::vector<int64_t> counts(counts_.begin(), counts_.begin() + nspecial_);
  const size_t keep = nwords > nspecial_ ? static_cast<size_t>(nwords - nspecial_) : 0;
  for (size_t i = 0; i < order.size() && i < keep; ++i) {
    if (counts_[order[i]] < threshold) break;
    symbols.push_back(std::move(symbols_[order[i]]));
    counts.push_back(counts_[order[i]]);
  }
  symbols_ = std::move(symbols);
  counts_ = std::move(counts);
  indices_.clear();
  for (int i = 0; i < size(); ++i) indices_.emplace(symbols_[i], i);

  if (padding_factor > 1) {
    for (int i = 0; size() % padding_factor != 0; ++i) {
      char name[32];
      std::snprintf(name, sizeof name, "madeupword%04d", i);
      add_symbol(name, 0);
    }
  }
}

int Dictionary::index(std::string_view word) const {
  auto found = indices_.find(lookup_key(word));
  return found == indices_.end() ? unk() : found->second;
}

bool Dictionary::contains(std::string_view word) const { return indices_.count(lookup_key(word)) != 0; }

const std::string& Dictionary::symbol(int index) const {
  if (index < 0 || index >= size())
    throw Error((origin_.empty() ? "" : origin_ + ": ") + "token id " + std::to_string(index) +
                " is not in the dictionary (" + std::to_string(size()) + " entries)");
  return symbols_[index];
}

void Dictionary::append_piece(std::string_view piece, std::vector<int32_t>& ids, int64_t* unknown) const {
  int id = index(piece);
  if (unknown && id == unk() && piece != symbols_[unk()]) ++*unknown;
  ids.push_back(id);
}

std::vector<int32_t> Dictionary::encode_line(std::string_view line, bool append_eos, int64_t* unknown) const {
  std::vector<int32_t> ids;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && is_space(line[i])) ++i;
    size_t start = i;
    while (i < line.size() && !is_space(line[i])) ++i;
    if (i > start) append_piece(line.substr(start, i - start), ids, unknown);
  }
  if (append_eos) ids.push_back(eos());
  return ids;
}

std::vector<int32_t> Dictionary::encode(const std::vector<std::string>& pieces, bool append_eos,
                                        int64_t* unknown) const {
  std::vector<int32_t> ids;
  ids.reserve(pieces.size() + 1);
  for (const auto& piece : pieces) append_piece(piece, ids, unknown);
  if (append_eos) ids.push_back(eos());
  return ids;
}

std::vector<std::string> Dictionary::symbols(const std::vector<int64_t>& ids, bool skip_special) const {
  std::vector<std::string> out;
  for (int64_t id : ids) {
    if (skip_special) {
      if (id == eos()) break;
      if (id == pad() || id == bos()) continue;
    }
    out.push_back(symbol(static_cast<int>(id)));
  }
  return out;
}

std::string Dictionary::to_string(const std::vector<int64_t>& ids, bool skip_special) const {
  std::string out;
  for (const std::string& s : symbols(ids, skip_special)) {
    if (!out.empty()) out += ' ';
    out += s;
  }
  return out;
}

}  // namespace csan::text
