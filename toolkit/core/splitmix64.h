// SplitMix64 (Steele, Lea & Flood 2014): a 64-bit counter hashed by a fixed finalizer.
// Tiny, well mixed and fully specified, so what is drawn from it is fixed here rather
// than left to std::*_distribution, whose results differ between standard libraries: the
// same seed gives byte-identical toy corpora, batch orders and dropout masks everywhere.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace csan::core {

// The counter's step (2^64 / the golden ratio).
inline constexpr uint64_t kSplitMix64Increment = 0x9E3779B97F4A7C15ULL;

// The finalizer: a good hash of a counter. The stream's i-th number (from 0) is
// splitmix64_mix(seed + (i + 1) * kSplitMix64Increment), so a counter-based user (one
// hash per block of a dropout mask) draws from the same family without keeping state.
constexpr uint64_t splitmix64_mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}

  uint64_t next() { return splitmix64_mix(state_ += kSplitMix64Increment); }

  // Uniform in [0, n), n > 0; rejection removes the bias of a plain modulo.
  uint64_t below(uint64_t n) {
    const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do {
      x = next();
    } while (x >= limit);
    return x % n;
  }

  // Uniform in [0, 1) with 53-bit resolution.
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  // True with probability p.
  bool chance(double p) { return unit() < p; }

  // Index drawn with the given (unnormalised, non-negative) weights.
  size_t weighted(const std::vector<double>& weights) {
    double total = 0;
    for (double w : weights) total += w;
    double x = unit() * total;
    for (size_t i = 0; i + 1 < weights.size(); ++i) {
      if (x < weights[i]) return i;
      x -= weights[i];
    }
    return weights.size() - 1;
  }

  // A generator for an independent stream, e.g. one per purpose, so that changing how
  // many numbers one purpose draws does not shift another's.
  SplitMix64 fork(uint64_t stream) { return SplitMix64(next() ^ (stream * 0xD1B54A32D192ED03ULL)); }

 private:
  uint64_t state_;
};

}  // namespace csan::core
