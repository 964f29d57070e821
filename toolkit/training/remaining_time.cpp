#include "toolkit/training/remaining_time.h"

#include <algorithm>

namespace csan::training {

void RemainingTime::observe(double seconds, int64_t update) {
  points_.emplace_back(seconds, update);
  while (points_.size() > window_ + 1) points_.pop_front();
}

std::optional<double> RemainingTime::seconds_left(int64_t max_update, std::optional<int64_t> at) const {
  if (points_.size() < 2) return std::nullopt;
  const auto& [first_seconds, first_update] = points_.front();
  const auto& [last_seconds, last_update] = points_.back();
  if (last_update <= first_update) return std::nullopt;
  const double per_update = (last_seconds - first_seconds) / static_cast<double>(last_update - first_update);
  return per_update * static_cast<double>(std::max<int64_t>(0, max_update - at.value_or(last_update)));
}

}  // namespace csan::training
