// BLEU as sacreBLEU 2.6.0 computes it (spec section 4): tokenizer, clipped n-gram
// counts against the max over references, closest reference length, smoothing.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "toolkit/scoring/metric.h"
#include "toolkit/scoring/metrics.h"
#include "toolkit/scoring/tokenizers.h"

namespace csan::scoring {

constexpr int kBleuMaxOrder = 4;

// Everything sacreBLEU's BLEUScore holds. counts/totals include add-k's additions.
struct BleuResult {
  double score = 0.0;
  std::array<double, kBleuMaxOrder> counts{};
  std::array<double, kBleuMaxOrder> totals{};
  std::array<double, kBleuMaxOrder> precisions{};
  double bp = 0.0;
  long long sys_len = 0;
  long long ref_len = 0;
  double ratio = 0.0;
  // "p1/p2/p3/p4 (BP = ... ratio = ... hyp_len = ... ref_len = ...)".
  std::string verbose() const;
};

class Bleu : public Metric {
 public:
  explicit Bleu(const BleuOptions& options);

  std::string name() const override { return "BLEU"; }
  std::vector<SignatureField> signature_fields() const override;
  std::vector<Stats> segment_stats(const std::vector<std::string>& hyps,
                                   const std::vector<std::vector<std::string>>& refs) const override;
  double score(const Stats& sum) const override { return compute(sum).score; }
  double score_float32(const std::vector<float>& sum) const override;
  bool integer_stats() const override { return true; }
  std::string verbose(const Stats& sum) const override { return compute(sum).verbose(); }

  // The full result for summed statistics [hyp_len, ref_len, correct1..4, total1..4].
  BleuResult compute(const Stats& sum) const;
  // Lowercase (-lc), rstrip and tokenize one line, as BLEU sees it (UTF-8).
  std::string preprocess(const std::string& line) const;

 private:
  BleuOptions options_;
  double smooth_value_;
  std::unique_ptr<Tokenizer> tokenizer_;
};

}  // namespace csan::scoring
