// TEMPORARY (measurement only): lets tools/bench/bench-train run the old and the new
// implementation of a hot path side by side in one process. Removed once measured.
#pragma once

namespace csan::nn {

struct SpeedSwitches {
  bool fused_dropout = true;
  bool fast_attention = true;
  bool fused_criterion = true;
};

inline SpeedSwitches& speed_switches() {
  static SpeedSwitches switches;
  return switches;
}

}  // namespace csan::nn
