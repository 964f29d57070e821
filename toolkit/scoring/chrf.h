// chrF and chrF++ as sacreBLEU 2.6.0 computes them (spec section 5): character n-grams
// (whitespace removed unless asked), optional word n-grams, best reference by
// sentence-level F, macro-averaged P and R (or eps smoothing) before the F-score.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "toolkit/scoring/metric.h"
#include "toolkit/scoring/metrics.h"

namespace csan::scoring {

// chrF++'s words: whitespace split, then one ASCII punctuation character split off the
// end (or else the start) of each word longer than one character. Views into `line`.
std::vector<std::u32string_view> chrf_words(std::u32string_view line);

class Chrf : public Metric {
 public:
  explicit Chrf(const ChrfOptions& options);

  std::string name() const override;
  std::vector<SignatureField> signature_fields() const override;
  std::vector<Stats> segment_stats(const std::vector<std::string>& hyps,
                                   const std::vector<std::vector<std::string>>& refs) const override;
  double score(const Stats& sum) const override;
  double score_float32(const std::vector<float>& sum) const override;
  bool integer_stats() const override { return true; }

 private:
  ChrfOptions options_;
};

}  // namespace csan::scoring
