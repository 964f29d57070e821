// numpy's default_rng (SeedSequence -> PCG64) and the two draws sacreBLEU makes with it:
// choice(N, size=(S, N)) for bootstrap indices and integers(2, dtype=bool) for the
// approximate-randomization masks. Bit-exact with numpy 1.24 so that p-values, means and
// confidence intervals match sacreBLEU's (spec §9.1).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace csan::scoring {

// numpy.random.SeedSequence(entropy).generate_state(n_words, uint64) for a non-negative seed.
std::vector<std::uint64_t> seed_sequence_state(std::uint64_t seed, int n_words);

class NumpyRng {
 public:
  // default_rng(seed); std::nullopt seeds from OS entropy (SACREBLEU_SEED=none).
  explicit NumpyRng(std::optional<std::uint64_t> seed);

  unsigned __int128 state() const { return state_; }
  unsigned __int128 increment() const { return inc_; }

  std::uint64_t next64();
  // Low half of a fresh 64-bit draw first, the saved high half on the next call.
  std::uint32_t next32();
  // Uniform in [0, max] by numpy's 32-bit Lemire method (max < 2^32 - 1).
  std::uint32_t bounded32(std::uint32_t max);

  // choice(n, size=(rows, n), replace=True), row-major.
  std::vector<std::uint32_t> choice(std::uint32_t n, std::size_t rows);
  // Appends rows x n further choice() draws (to stream a big matrix in chunks).
  void choice_into(std::uint32_t n, std::size_t rows, std::vector<std::uint32_t>& out);
  // integers(2, size=(rows, cols), dtype=bool), row-major, one byte (0/1) per draw.
  std::vector<std::uint8_t> bools(std::size_t rows, std::size_t cols);
  // The same draws packed: bit (i % 32) of word (i / 32) is draw i (numpy uses the
  // bits of each next32() value LSB first).
  std::vector<std::uint32_t> bool_words(std::size_t count);

 private:
  void seed_from_words(const std::vector<std::uint64_t>& words);
  void step();

  unsigned __int128 state_ = 0;
  unsigned __int128 inc_ = 0;
  bool has_half_ = false;
  std::uint32_t half_ = 0;
};

}  // namespace csan::scoring
