// The shape every metric shares (as in sacreBLEU): per-segment sufficient statistics
// are extracted once; corpus scores, sentence scores and every resampling test only
// sum statistics and score the sums, never re-tokenizing.
#pragma once

#include <string>
#include <vector>

namespace csan::scoring {

// One segment's sufficient statistics (BLEU: [hyp_len, ref_len, correct1..4, total1..4];
// chrF: [hyp, ref, match] per order; TER: [edits, average ref length]).
using Stats = std::vector<double>;

// One "key:value" entry of a signature; short_key is the --short abbreviation.
struct SignatureField {
  std::string key;
  std::string short_key;
  std::string value;
};

class Metric {
 public:
  virtual ~Metric() = default;

  // "BLEU", "chrF2", "chrF2++", "TER": the name printed before the signature.
  virtual std::string name() const = 0;
  // The metric's own signature fields in sacreBLEU's order, without the common ones
  // (nrefs, bs/ar, seed, version), e.g. BLEU: case, eff, tok, smooth.
  virtual std::vector<SignatureField> signature_fields() const = 0;

  // hyps[i] and refs[r][i] (reference set r, segment i), lines already rstripped.
  // Returns one Stats per segment. May use several threads.
  virtual std::vector<Stats> segment_stats(const std::vector<std::string>& hyps,
                                           const std::vector<std::vector<std::string>>& refs) const = 0;

  // Score of summed statistics on the exact double path (corpus and sentence scores).
  virtual double score(const Stats& sum) const = 0;
  // Score of statistics summed in float32, as sacreBLEU's bootstrap does (spec §9.5).
  virtual double score_float32(const std::vector<float>& sum) const = 0;
  // Paired approximate randomization sums statistics in int64 (true) or float64 (false).
  virtual bool integer_stats() const = 0;
  // Text after the score in the text line (BLEU's "p1/p2/p3/p4 (BP = ...)"); may be empty.
  virtual std::string verbose(const Stats& /*sum*/) const { return ""; }
};

}  // namespace csan::scoring
