// References given for only some segments of a stream, as sacreBLEU's Python API allows
// (a reference may be None, for a variable number of references per segment): each
// segment is scored against the references it has, and the signature's nrefs becomes
// "var" when segments have different numbers of them.
#pragma once

#include <string>
#include <vector>

#include "toolkit/scoring/metric.h"

namespace csan::scoring {

struct ReferenceStreams {
  std::vector<std::vector<std::string>> streams;  // streams[r][i]: stream r, segment i
  // present[r][i] is false where stream r gives no reference for segment i; empty when
  // every reference is present (the common case, scored in one call).
  std::vector<std::vector<bool>> present;

  // References per segment, or -1 when segments have different numbers of them.
  // Throws csan::Error (bad_input) for a segment without any reference.
  int count_per_segment() const;
};

// Metric::segment_stats where some references may be absent: segments are grouped by
// which streams they have and each group is scored on those streams alone.
std::vector<Stats> segment_stats(const Metric& metric, const std::vector<std::string>& hyps,
                                 const ReferenceStreams& refs);

}  // namespace csan::scoring
