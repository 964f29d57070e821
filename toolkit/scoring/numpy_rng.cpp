#include "toolkit/scoring/numpy_rng.h"

#include <array>
#include <random>

namespace csan::scoring {

namespace {

constexpr std::uint32_t kInitA = 0x43b0d7e5;
constexpr std::uint32_t kMultA = 0x931e8875;
constexpr std::uint32_t kInitB = 0x8b51f9dd;
constexpr std::uint32_t kMultB = 0x58f38ded;
constexpr std::uint32_t kMixL = 0xca01f9dd;
constexpr std::uint32_t kMixR = 0x4973f715;
constexpr int kXShift = 16;
constexpr int kPoolSize = 4;

class Hashmix {
 public:
  std::uint32_t operator()(std::uint32_t value) {
    value ^= h_;
    h_ *= kMultA;
    value *= h_;
    value ^= value >> kXShift;
    return value;
  }

 private:
  std::uint32_t h_ = kInitA;
};

std::uint32_t mix(std::uint32_t x, std::uint32_t y) {
  std::uint32_t result = kMixL * x - kMixR * y;
  return result ^ (result >> kXShift);
}

std::vector<std::uint64_t> generate_state(const std::vector<std::uint32_t>& entropy, int n_words) {
  std::array<std::uint32_t, kPoolSize> pool{};
  Hashmix hashmix;
  for (int i = 0; i < kPoolSize; ++i)
    pool[i] = hashmix(i < static_cast<int>(entropy.size()) ? entropy[i] : 0);
  for (int src = 0; src < kPoolSize; ++src)
    for (int dst = 0; dst < kPoolSize; ++dst)
      if (src != dst) pool[dst] = mix(pool[dst], hashmix(pool[src]));
  for (std::size_t src = kPoolSize; src < entropy.size(); ++src)
    for (int dst = 0; dst < kPoolSize; ++dst) pool[dst] = mix(pool[dst], hashmix(entropy[src]));

  std::vector<std::uint32_t> words(2 * static_cast<std::size_t>(n_words));
  std::uint32_t h = kInitB;
  for (std::size_t t = 0; t < words.size(); ++t) {
    std::uint32_t value = pool[t % kPoolSize] ^ h;
    h *= kMultB;
    value *= h;
    value ^= value >> kXShift;
    words[t] = value;
  }
  std::vector<std::uint64_t> state(n_words);
  for (int j = 0; j < n_words; ++j)
    state[j] = static_cast<std::uint64_t>(words[2 * j]) | static_cast<std::uint64_t>(words[2 * j + 1]) << 32;
  return state;
}

std::vector<std::uint32_t> seed_words(std::uint64_t seed) {
  std::vector<std::uint32_t> words{static_cast<std::uint32_t>(seed)};
  if (seed >> 32) words.push_back(static_cast<std::uint32_t>(seed >> 32));
  return words;
}

const unsigned __int128 kPcgMultiplier =
    (static_cast<unsigned __int128>(0x2360ED051FC65DA4ULL) << 64) | 0x4385DF649FCCF645ULL;

}  // namespace

std::vector<std::uint64_t> seed_sequence_state(std::uint64_t seed, int n_words) {
  return generate_state(seed_words(seed), n_words);
}

NumpyRng::NumpyRng(std::optional<std::uint64_t> seed) {
  if (seed) {
    seed_from_words(seed_sequence_state(*seed, 4));
    return;
  }
  // numpy draws 128 bits of OS entropy when no seed is given.
  std::random_device device;
  std::vector<std::uint32_t> entropy(4);
  for (auto& word : entropy) word = device();
  seed_from_words(generate_state(entropy, 4));
}

void NumpyRng::seed_from_words(const std::vector<std::uint64_t>& words) {
  const unsigned __int128 initstate = (static_cast<unsigned __int128>(words[0]) << 64) | words[1];
  const unsigned __int128 initseq = (static_cast<unsigned __int128>(words[2]) << 64) | words[3];
  inc_ = (initseq << 1) | 1;
  state_ = 0;
  step();
  state_ += initstate;
  step();
  has_half_ = false;
}

void NumpyRng::step() { state_ = state_ * kPcgMultiplier + inc_; }

std::uint64_t NumpyRng::next64() {
  step();
  const auto hi = static_cast<std::uint64_t>(state_ >> 64);
  const auto lo = static_cast<std::uint64_t>(state_);
  const std::uint64_t x = hi ^ lo;
  const unsigned rot = static_cast<unsigned>(state_ >> 122);
  return (x >> rot) | (x << ((64 - rot) & 63));
}

std::uint32_t NumpyRng::next32() {
  if (has_half_) {
    has_half_ = false;
    return half_;
  }
  const std::uint64_t value = next64();
  has_half_ = true;
  half_ = static_cast<std::uint32_t>(value >> 32);
  return static_cast<std::uint32_t>(value);
}

std::uint32_t NumpyRng::bounded32(std::uint32_t max) {
  if (max == 0) return 0;
  const std::uint64_t range = static_cast<std::uint64_t>(max) + 1;
  std::uint64_t m = static_cast<std::uint64_t>(next32()) * range;
  auto low = static_cast<std::uint32_t>(m);
  if (low < range) {
    const auto threshold = static_cast<std::uint32_t>((0xFFFFFFFFULL - max) % range);
    while (low < threshold) {
      m = static_cast<std::uint64_t>(next32()) * range;
      low = static_cast<std::uint32_t>(m);
    }
  }
  return static_cast<std::uint32_t>(m >> 32);
}

void NumpyRng::choice_into(std::uint32_t n, std::size_t rows, std::vector<std::uint32_t>& out) {
  const std::size_t count = rows * n;
  out.reserve(out.size() + count);
  for (std::size_t i = 0; i < count; ++i) out.push_back(bounded32(n - 1));
}

std::vector<std::uint32_t> NumpyRng::choice(std::uint32_t n, std::size_t rows) {
  std::vector<std::uint32_t> out;
  choice_into(n, rows, out);
  return out;
}

std::vector<std::uint8_t> NumpyRng::bools(std::size_t rows, std::size_t cols) {
  std::vector<std::uint8_t> out(rows * cols);
  std::uint32_t buffer = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (i % 32 == 0) buffer = next32();
    else buffer >>= 1;
    out[i] = buffer & 1u;
  }
  return out;
}

std::vector<std::uint32_t> NumpyRng::bool_words(std::size_t count) {
  std::vector<std::uint32_t> words((count + 31) / 32);
  for (auto& word : words) word = next32();
  return words;
}

}  // namespace csan::scoring
