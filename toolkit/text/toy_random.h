// The toy corpus's random numbers. The algorithm (SplitMix64) and the way numbers are
// drawn from it are fixed here rather than left to std::*_distribution, whose results
// differ between standard libraries: the same seed must give byte-identical corpora
// everywhere.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace csan::text {

class ToyRandom {
 public:
  explicit ToyRandom(uint64_t seed) : state_(seed) {}

  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

  // Uniform in [0, n), n > 0; rejection removes the bias of a plain modulo.
  size_t below(size_t n) {
    const uint64_t bound = static_cast<uint64_t>(n);
    const uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
    uint64_t x;
    do {
      x = next();
    } while (x >= limit);
    return static_cast<size_t>(x % bound);
  }

  // True with probability p (53-bit resolution).
  bool chance(double p) { return static_cast<double>(next() >> 11) * 0x1.0p-53 < p; }

  // Index drawn with the given (unnormalised, non-negative) weights.
  size_t weighted(const std::vector<double>& weights) {
    double total = 0;
    for (double w : weights) total += w;
    double x = static_cast<double>(next() >> 11) * 0x1.0p-53 * total;
    for (size_t i = 0; i + 1 < weights.size(); ++i) {
      if (x < weights[i]) return i;
      x -= weights[i];
    }
    return weights.size() - 1;
  }

  // A generator for an independent stream, e.g. one per purpose, so that changing how
  // many numbers one purpose draws does not shift another's.
  ToyRandom fork(uint64_t stream) { return ToyRandom(next() ^ (stream * 0xd1b54a32d192ed03ULL)); }

 private:
  uint64_t state_;
};

}  // namespace csan::text
