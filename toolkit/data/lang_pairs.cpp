#include "toolkit/data/lang_pairs.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

#include "toolkit/core/error.h"
#include "toolkit/data/batching.h"

namespace csan::data {

namespace {

// A language names files (PREFIX.SRC-TGT.LANG), so it cannot hold the separators.
bool valid_language(const std::string& lang) {
  return !lang.empty() && lang.find_first_of(".-/ \t\r\n,") == std::string::npos;
}

}  // namespace

std::vector<LangPair> parse_lang_pairs(const std::string& list, const std::string& option) {
  std::vector<LangPair> pairs;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t comma = std::min(list.find(',', start), list.size());
    const std::string item = list.substr(start, comma - start);
    const size_t dash = item.find('-');
    if (dash == std::string::npos || !valid_language(item.substr(0, dash)) || !valid_language(item.substr(dash + 1)))
      throw Error::for_key(option, "'" + item + "' is not a language pair SRC-TGT (e.g. en-de,de-en)");
    LangPair pair{item.substr(0, dash), item.substr(dash + 1)};
    if (pair.src == pair.tgt) throw Error::for_key(option, "'" + item + "' translates a language into itself");
    if (std::find(pairs.begin(), pairs.end(), pair) != pairs.end())
      throw Error::for_key(option, "'" + item + "' is given twice");
    pairs.push_back(pair);
    start = comma + 1;
  }
  return pairs;
}

std::string format_lang_pairs(const std::vector<LangPair>& pairs) {
  std::string out;
  for (const auto& p : pairs) out += (out.empty() ? "" : ",") + p.name();
  return out;
}

std::vector<std::string> pair_languages(const std::vector<LangPair>& pairs) {
  std::set<std::string> langs;
  for (const auto& p : pairs) langs.insert({p.src, p.tgt});
  return {langs.begin(), langs.end()};
}

std::string lang_token(const std::string& lang) { return "__" + lang + "__"; }

std::vector<double> temperature_sampling_ratios(const std::vector<int64_t>& sizes, double temperature,
                                                const std::string& option) {
  if (!(temperature > 0) || !std::isfinite(temperature))
    throw Error::for_key(option,
                         "must be a number > 0 (1: proportional to the data), got " + std::to_string(temperature));
  const double total = static_cast<double>(std::accumulate(sizes.begin(), sizes.end(), int64_t{0}));
  if (sizes.empty() || total <= 0) throw Error::for_key(option, "no training data to sample from");
  std::vector<double> ratios;
  for (int64_t n : sizes) ratios.push_back(std::pow(static_cast<double>(n) / total, 1.0 / temperature));
  const double sum = std::accumulate(ratios.begin(), ratios.end(), 0.0);
  for (double& r : ratios) r /= sum;
  return ratios;
}

std::vector<int64_t> sampled_counts(const std::vector<int64_t>& sizes, const std::vector<double>& ratios) {
  const size_t largest = static_cast<size_t>(std::max_element(sizes.begin(), sizes.end()) - sizes.begin());
  double virtual_size = 0;
  for (double r : ratios) virtual_size += r / ratios[largest] * static_cast<double>(sizes[largest]);
  const double total = static_cast<double>(std::accumulate(sizes.begin(), sizes.end(), int64_t{0}));
  const auto epoch = static_cast<int64_t>(std::min(virtual_size, total * 1.5));
  std::vector<int64_t> counts;
  std::vector<std::pair<double, size_t>> remainders;
  int64_t assigned = 0;
  for (size_t i = 0; i < ratios.size(); ++i) {
    const double share = static_cast<double>(epoch) * ratios[i];
    counts.push_back(static_cast<int64_t>(std::floor(share)));
    assigned += counts.back();
    remainders.emplace_back(share - std::floor(share), i);
  }
  // Largest remainder first; equal remainders in dataset order.
  std::stable_sort(remainders.begin(), remainders.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (size_t k = 0; assigned < epoch; ++k, ++assigned) ++counts[remainders[k % remainders.size()].second];
  return counts;
}

std::vector<int64_t> sample_indices(int64_t size, int64_t count, uint64_t seed) {
  std::vector<int64_t> indices;
  if (size <= 0) return indices;
  for (int64_t round = 0; round < count / size; ++round)
    for (int64_t i = 0; i < size; ++i) indices.push_back(i);
  std::vector<int64_t> rest(static_cast<size_t>(size));
  std::iota(rest.begin(), rest.end(), int64_t{0});
  deterministic_shuffle(rest, seed);
  rest.resize(static_cast<size_t>(count % size));
  std::sort(rest.begin(), rest.end());
  indices.insert(indices.end(), rest.begin(), rest.end());
  return indices;
}

}  // namespace csan::data
