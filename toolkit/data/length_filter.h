// Sentence-pair cleaning with the rules of Moses' clean-corpus-n.perl, applied to token
// counts: a pair is dropped when a side is shorter than min_len or longer than max_len,
// or when one side is more than max_len_ratio times longer than the other.
#pragma once

#include <cstdint>
#include <string>

namespace csan::data {

struct LengthFilter {
  int64_t min_len = 0;          // 0 = no minimum (empty lines are kept, as in fairseq)
  int64_t max_len = 0;          // 0 = no maximum
  double max_len_ratio = 0;     // 0 = no ratio limit

  enum class Verdict { kKeep, kTooShort, kTooLong, kRatio };

  // `target_len` < 0 means monolingual data (only the length limits apply).
  Verdict check(int64_t source_len, int64_t target_len = -1) const;
  bool active() const { return min_len > 0 || max_len > 0 || max_len_ratio > 0; }
};

// How many pairs each rule removed (first failing rule in the order short, long, ratio).
struct FilterCounts {
  int64_t too_short = 0;
  int64_t too_long = 0;
  int64_t ratio = 0;

  void add(LengthFilter::Verdict verdict);
  int64_t total() const { return too_short + too_long + ratio; }
};

}  // namespace csan::data
