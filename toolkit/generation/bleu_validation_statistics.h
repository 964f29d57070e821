// BLEU sufficient statistics for validation during training, as sacreBLEU computes them
// for one reference per segment: [hyp_len, ref_len, matches_1..4, totals_1..4], summable
// over segments and ranks, and the corpus score of a sum (default smoothing "exp",
// mixed case, no effective order). scoring::Bleu computes the same numbers, but it pulls
// in every sacreBLEU tokenizer including SentencePiece, and libsentencepiece's bundled
// protobuf aborts a process that loads LibTorch; so this uses only scoring's
// SentencePiece-free tokenizers.
#pragma once

#include <string>
#include <vector>

namespace csan::generation {

constexpr int kBleuOrder = 4;
constexpr size_t kBleuStatisticsSize = 2 + 2 * kBleuOrder;

class BleuStatistics {
 public:
  // tokenize: 13a, intl, zh or none (sacreBLEU's -tok); throws csan::Error naming
  // task.eval_bleu_tokenize otherwise.
  explicit BleuStatistics(const std::string& tokenize);

  // Statistics of one hypothesis against its reference (both valid UTF-8).
  std::vector<double> segment(const std::string& hypothesis, const std::string& reference) const;
  // Adds segment(hypothesis, reference) to `sums` (kBleuStatisticsSize values).
  void add(const std::string& hypothesis, const std::string& reference, std::vector<double>& sums) const;

 private:
  std::vector<std::string> words(const std::string& line) const;
  std::string tokenize_;
};

// sacreBLEU's corpus BLEU of summed statistics.
double bleu_from_statistics(const std::vector<double>& sums);

}  // namespace csan::generation
