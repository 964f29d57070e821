// Splits per-segment work over the machine's cores (segments are independent).
#pragma once

#include <cstddef>
#include <functional>

namespace csan::scoring {

// Calls body(begin, end) on contiguous chunks covering [0, n), on up to
// hardware_concurrency threads; inputs below min_chunk items run on the calling thread.
// The first exception thrown by a chunk is rethrown here.
void parallel_for(size_t n, const std::function<void(size_t, size_t)>& body, size_t min_chunk = 256);

}  // namespace csan::scoring
