#include "toolkit/generation/bleu_validation_statistics.h"

#include <algorithm>
#include <cmath>
#include <string_view>
#include <unordered_map>

#include "toolkit/core/error.h"
#include "toolkit/scoring/tokenizers.h"
#include "toolkit/scoring/unicode.h"

namespace csan::generation {

namespace {

// N-grams of order n as one string each (words contain no space after the split).
std::unordered_map<std::string, int> ngram_counts(const std::vector<std::string>& words, int n) {
  std::unordered_map<std::string, int> counts;
  for (size_t i = 0; i + n <= words.size(); ++i) {
    std::string key = words[i];
    for (int k = 1; k < n; ++k) key += ' ' + words[i + k];
    ++counts[key];
  }
  return counts;
}

// sacreBLEU's my_log: log(0) is a large negative number instead of -inf.
double log_or_floor(double x) { return x == 0.0 ? -9999999999.0 : std::log(x); }

}  // namespace

BleuStatistics::BleuStatistics(const std::string& tokenize) : tokenize_(tokenize) {
  if (tokenize != "13a" && tokenize != "intl" && tokenize != "zh" && tokenize != "none")
    throw Error::for_key("task.eval_bleu_tokenize", "unknown tokenizer '" + tokenize + "' (choose from 13a, intl, zh, none)");
}

// What sacreBLEU's BLEU does to a line: rstrip, tokenize, split on whitespace.
std::vector<std::string> BleuStatistics::words(const std::string& line) const {
  const std::string_view stripped = scoring::rstrip(std::string_view(line));
  std::string tokenized;
  if (tokenize_ == "13a") {
    tokenized = scoring::tokenize_13a(stripped);
  } else if (tokenize_ == "intl") {
    tokenized = scoring::to_utf8(scoring::tokenize_intl(scoring::to_u32(stripped)));
  } else if (tokenize_ == "zh") {
    tokenized = scoring::to_utf8(scoring::tokenize_zh(scoring::to_u32(stripped)));
  } else {
    tokenized = std::string(stripped);
  }
  std::vector<std::string> out;
  for (std::string_view w : scoring::split(std::string_view(tokenized))) out.emplace_back(w);
  return out;
}

std::vector<double> BleuStatistics::segment(const std::string& hypothesis, const std::string& reference) const {
  const auto hyp = words(hypothesis), ref = words(reference);
  std::vector<double> stats(kBleuStatisticsSize, 0.0);
  stats[0] = static_cast<double>(hyp.size());
  stats[1] = static_cast<double>(ref.size());
  for (int n = 1; n <= kBleuOrder; ++n) {
    const auto hyp_counts = ngram_counts(hyp, n), ref_counts = ngram_counts(ref, n);
    int64_t matches = 0;
    for (const auto& [ngram, count] : hyp_counts) {
      const auto found = ref_counts.find(ngram);
      if (found != ref_counts.end()) matches += std::min(count, found->second);
    }
    stats[1 + n] = static_cast<double>(matches);
    stats[1 + kBleuOrder + n] = static_cast<double>(hyp.size() >= static_cast<size_t>(n) ? hyp.size() - n + 1 : 0);
  }
  return stats;
}

void BleuStatistics::add(const std::string& hypothesis, const std::string& reference,
                         std::vector<double>& sums) const {
  const auto stats = segment(hypothesis, reference);
  for (size_t i = 0; i < kBleuStatisticsSize; ++i) sums[i] += stats[i];
}

double bleu_from_statistics(const std::vector<double>& sums) {
  if (sums.size() != kBleuStatisticsSize) throw Error("BLEU statistics must have 10 values");
  const double sys_len = sums[0], ref_len = sums[1];
  double brevity_penalty = 1.0;
  if (sys_len < ref_len) brevity_penalty = sys_len > 0 ? std::exp(1.0 - ref_len / sys_len) : 0.0;
  bool any_match = false;
  for (int n = 0; n < kBleuOrder; ++n) any_match = any_match || sums[2 + n] != 0.0;
  if (!any_match) return 0.0;  // sacreBLEU returns before smoothing
  // "exp" smoothing: the k-th order without matches counts as 1 / 2^k matches.
  double smooth = 1.0, log_sum = 0.0;
  for (int n = 0; n < kBleuOrder; ++n) {
    const double matches = sums[2 + n], total = sums[2 + kBleuOrder + n];
    double precision = 0.0;  // orders beyond the longest hypothesis stay 0
    if (total == 0.0) {
      for (int rest = n; rest < kBleuOrder; ++rest) log_sum += log_or_floor(0.0);
      break;
    }
    if (matches == 0.0) {
      smooth *= 2;
      precision = 100.0 / (smooth * total);
    } else {
      precision = 100.0 * matches / total;
    }
    log_sum += log_or_floor(precision);
  }
  return brevity_penalty * std::exp(log_sum / kBleuOrder);
}

}  // namespace csan::generation
