// The time a run has left, from its recent pace: the wall time of the last `window` log
// intervals (the validations and checkpoints between them included) over the updates they
// made. The whole run's average, used before, carried a pause (Ctrl-Z, a stopped job, a
// machine busy for a while) in every later estimate, which then overstated the time
// left several-fold for the rest of the run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <utility>

namespace csan::training {

class RemainingTime {
 public:
  explicit RemainingTime(size_t window = 10) : window_(window) {}

  // The run had made `update` updates `seconds` after it started.
  void observe(double seconds, int64_t update);
  // Seconds from update `at` (default: the last observed) to `max_update` at the recent
  // pace; nothing before two points with updates between.
  std::optional<double> seconds_left(int64_t max_update, std::optional<int64_t> at = std::nullopt) const;

 private:
  size_t window_;
  std::deque<std::pair<double, int64_t>> points_;  // (seconds, update), oldest first
};

}  // namespace csan::training
