#include "toolkit/data/tagging_vocabulary.h"

#include <algorithm>

#include "toolkit/core/atomic_file.h"
#include "toolkit/core/error.h"

namespace csan::data {

TaggingVocabulary::TaggingVocabulary() {
  add(kPadSymbol, 0);
  add(kOovSymbol, 0);
}

int TaggingVocabulary::add(std::string_view symbol, int64_t count) {
  const std::string key(symbol);
  auto it = indices_.find(key);
  if (it != indices_.end()) {
    counts_[static_cast<size_t>(it->second)] += count;
    return it->second;
  }
  const int index = size();
  symbols_.push_back(key);
  counts_.push_back(count);
  indices_.emplace(key, index);
  return index;
}

int TaggingVocabulary::index(std::string_view symbol) const {
  auto it = indices_.find(std::string(symbol));
  return it == indices_.end() ? kOov : it->second;
}

std::string TaggingVocabulary::to_text() const {
  std::string out;
  for (size_t i = 0; i < symbols_.size(); ++i) out += symbols_[i] + " " + std::to_string(counts_[i]) + "\n";
  return out;
}

void TaggingVocabulary::save(const std::string& path) const { write_file_atomically(path, to_text()); }

TaggingVocabulary TaggingVocabulary::parse(std::string_view text, const std::string& origin) {
  TaggingVocabulary vocab;
  vocab.symbols_.clear(), vocab.counts_.clear(), vocab.indices_.clear();
  long number = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string line(text.substr(start, end - start));
    start = end + 1;
    ++number;
    const size_t space = line.rfind(' ');
    const std::string count = space == std::string::npos ? "" : line.substr(space + 1);
    if (space == 0 || count.empty() || !std::all_of(count.begin(), count.end(), [](char c) { return c >= '0' && c <= '9'; }))
      throw Error::at(origin, number, "expected 'SYMBOL COUNT', got '" + line + "'");
    const std::string symbol = line.substr(0, space);
    if (vocab.contains(symbol)) throw Error::at(origin, number, "'" + symbol + "' is listed twice");
    vocab.add(symbol, std::stoll(count));
  }
  if (vocab.size() < 2 || vocab.symbol(kPad) != kPadSymbol || vocab.symbol(kOov) != kOovSymbol)
    throw Error(origin + ": a tagging vocabulary starts with " + kPadSymbol + " and " + kOovSymbol);
  return vocab;
}

TaggingVocabulary TaggingVocabulary::load(const std::string& path) { return parse(read_file(path), path); }

void FirstSeenCounter::add(const std::string& symbol, int64_t n) {
  auto [it, inserted] = counts_.emplace(symbol, 0);
  if (inserted) order_.push_back(symbol);
  it->second += n;
}

std::vector<std::pair<std::string, int64_t>> FirstSeenCounter::most_common() const {
  std::vector<std::pair<std::string, int64_t>> out;
  out.reserve(order_.size());
  for (const auto& symbol : order_) out.emplace_back(symbol, counts_.at(symbol));
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return out;
}

}  // namespace csan::data
