#include "toolkit/data/length_filter.h"

#include <algorithm>

namespace csan::data {

LengthFilter::Verdict LengthFilter::check(int64_t source_len, int64_t target_len) const {
  const bool pair = target_len >= 0;
  const int64_t shortest = pair ? std::min(source_len, target_len) : source_len;
  const int64_t longest = pair ? std::max(source_len, target_len) : source_len;
  if (shortest < min_len) return Verdict::kTooShort;
  if (max_len > 0 && longest > max_len) return Verdict::kTooLong;
  // clean-corpus-n drops a pair when either length divided by the other exceeds the
  // ratio; an empty side against a non-empty one is an infinite ratio.
  if (pair && max_len_ratio > 0 && longest > 0 &&
      (shortest == 0 || static_cast<double>(longest) / static_cast<double>(shortest) > max_len_ratio))
    return Verdict::kRatio;
  return Verdict::kKeep;
}

void FilterCounts::add(LengthFilter::Verdict verdict) {
  switch (verdict) {
    case LengthFilter::Verdict::kTooShort: ++too_short; break;
    case LengthFilter::Verdict::kTooLong: ++too_long; break;
    case LengthFilter::Verdict::kRatio: ++ratio; break;
    case LengthFilter::Verdict::kKeep: break;
  }
}

}  // namespace csan::data
