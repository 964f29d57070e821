// TER as sacreBLEU 2.6.0 computes it (spec section 6): Tercom normalisation, edits
// with shifts against each reference, the minimum edits over references and the
// average reference length per segment.
#pragma once

#include <string>
#include <vector>

#include "toolkit/scoring/metric.h"
#include "toolkit/scoring/metrics.h"
#include "toolkit/scoring/ter_normalizer.h"

namespace csan::scoring {

struct TerResult {
  double score = 0.0;
  double num_edits = 0.0;
  double ref_length = 0.0;
};

class Ter : public Metric {
 public:
  explicit Ter(const TerOptions& options);

  std::string name() const override { return "TER"; }
  std::vector<SignatureField> signature_fields() const override;
  std::vector<Stats> segment_stats(const std::vector<std::string>& hyps,
                                   const std::vector<std::vector<std::string>>& refs) const override;
  double score(const Stats& sum) const override { return compute(sum).score; }
  double score_float32(const std::vector<float>& sum) const override;
  bool integer_stats() const override { return false; }

  TerResult compute(const Stats& sum) const;

 private:
  TerNormalizerOptions normalizer_;
};

}  // namespace csan::scoring
