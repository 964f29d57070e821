// Per-segment sufficient statistics held on the C++ side between calls (a corpus score,
// a bootstrap, a paired test), so Python never copies them row by row.
#pragma once

#include <vector>

#include "toolkit/scoring/metric.h"

namespace csan::python {

struct SegmentStatistics {
  std::vector<scoring::Stats> rows;
  int num_refs = 1;  // references per segment; -1 when it varies
};

}  // namespace csan::python
