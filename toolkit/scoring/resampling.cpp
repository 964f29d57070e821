#include "toolkit/scoring/resampling.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <thread>

#include "toolkit/core/error.h"
#include "toolkit/scoring/numpy_rng.h"

namespace csan::scoring {

namespace {

// Index rows are generated in chunks of about this many draws, so that a bootstrap over
// a large corpus never holds the whole (n_samples x n_segments) matrix.
constexpr std::size_t kChunkDraws = std::size_t{1} << 22;

// More threads than cores would only cost memory (the results do not depend on the
// count): `-j 100000` runs on every core, not on 100000 threads.
int resolve_threads(int threads) {
  const unsigned hardware = std::thread::hardware_concurrency();
  const int cores = hardware == 0 ? 1 : static_cast<int>(hardware);
  return threads > 0 ? std::min(threads, cores) : cores;
}

// Runs body(begin, end) over [0, count) split into contiguous ranges, one per thread.
void parallel_ranges(std::size_t count, int threads, const std::function<void(std::size_t, std::size_t)>& body) {
  const std::size_t workers = std::min<std::size_t>(static_cast<std::size_t>(resolve_threads(threads)), count);
  if (workers <= 1) {
    if (count) body(0, count);
    return;
  }
  std::vector<std::thread> pool;
  const std::size_t per = (count + workers - 1) / workers;
  for (std::size_t begin = 0; begin < count; begin += per) pool.emplace_back(body, begin, std::min(count, begin + per));
  for (auto& thread : pool) thread.join();
}

// np.array(stats, dtype='float32'): one row per segment.
struct Float32Matrix {
  std::size_t rows = 0;
  std::size_t cols = 0;
  std::vector<float> values;

  explicit Float32Matrix(const std::vector<Stats>& segments) : rows(segments.size()) {
    cols = rows ? segments[0].size() : 0;
    values.reserve(rows * cols);
    for (const auto& segment : segments) {
      if (segment.size() != cols) throw Error("resampling: segments have different statistics sizes");
      for (double v : segment) values.push_back(static_cast<float>(v));
    }
  }
  const float* row(std::size_t i) const { return values.data() + i * cols; }

  // The same values column by column (cols x rows), for the counted sums.
  std::vector<float> transposed() const {
    std::vector<float> out(rows * cols);
    for (std::size_t i = 0; i < rows; ++i)
      for (std::size_t c = 0; c < cols; ++c) out[c * rows + i] = values[i * cols + c];
    return out;
  }
};

// One metric's bootstrap scores over one system's statistics.
struct BootstrapJob {
  const Metric* metric;
  const Float32Matrix* stats;
  std::vector<double> scores;
  std::vector<float> columns;  // stats transposed, for counted sums
};

// sum[c] = Σ_j rows[idx[j]][c], added in float32 in index order (numpy's sum(0)). The
// column count is a template parameter for the common metrics so that the accumulators
// stay in registers; every column is still summed sequentially.
template <std::size_t Cols>
void sum_selected_fixed(const Float32Matrix& stats, const std::uint32_t* idx, std::size_t n, float* sum) {
  float acc[Cols] = {};
  const float* base = stats.values.data();
  for (std::size_t j = 0; j < n; ++j) {
    const float* segment = base + static_cast<std::size_t>(idx[j]) * Cols;
    for (std::size_t c = 0; c < Cols; ++c) acc[c] += segment[c];
  }
  for (std::size_t c = 0; c < Cols; ++c) sum[c] = acc[c];
}

void sum_selected(const Float32Matrix& stats, const std::uint32_t* idx, std::size_t n, float* sum) {
  switch (stats.cols) {
    case 2:
      return sum_selected_fixed<2>(stats, idx, n, sum);  // TER
    case 10:
      return sum_selected_fixed<10>(stats, idx, n, sum);  // BLEU
    case 18:
      return sum_selected_fixed<18>(stats, idx, n, sum);  // chrF
    case 24:
      return sum_selected_fixed<24>(stats, idx, n, sum);  // chrF++
    default:
      break;
  }
  std::fill(sum, sum + stats.cols, 0.0f);
  for (std::size_t j = 0; j < n; ++j) {
    const float* segment = stats.row(idx[j]);
    for (std::size_t c = 0; c < stats.cols; ++c) sum[c] += segment[c];
  }
}

// True when every float32 sum of these rows is exact in any order: all values are
// multiples of 2^-p (p <= 3) and no sum can reach 2^24 * 2^-p. This holds for BLEU and
// chrF counts and for TER with one or two references on any realistic corpus; then a
// resample can be summed from per-segment counts instead of in index order.
bool sums_exact_in_any_order(const Float32Matrix& stats) {
  for (int p = 0; p <= 3; ++p) {
    const float scale = static_cast<float>(1 << p);
    double largest = 0.0;
    bool dyadic = true;
    for (float v : stats.values) {
      const float scaled = v * scale;
      if (scaled != std::floor(scaled) || v < 0.0f) {
        dyadic = false;
        break;
      }
      largest = std::max(largest, static_cast<double>(scaled));
    }
    if (dyadic) return largest * static_cast<double>(stats.rows) < 16777216.0;
  }
  return false;
}

// Σ_j weights[j] * column[j] with eight independent lanes (vectorizable). Only used when
// every partial sum is exact (sums_exact_in_any_order), so the order does not matter.
float weighted_column_sum(const float* weights, const float* column, std::size_t n) {
  float lanes[8] = {};
  std::size_t j = 0;
  for (; j + 8 <= n; j += 8)
    for (int l = 0; l < 8; ++l) lanes[l] += weights[j + l] * column[j + l];
  float sum = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
  for (; j < n; ++j) sum += weights[j] * column[j];
  return sum;
}

// Draws n_samples index rows from `rng` (numpy choice) and scores every job on each row:
// the selected rows are summed in float32 in index order (numpy's sum(0)).
void run_bootstrap(NumpyRng& rng, std::size_t n_segments, std::size_t n_samples, std::vector<BootstrapJob>& jobs,
                   int threads) {
  for (auto& job : jobs) job.scores.assign(n_samples, 0.0);
  const bool any_order = std::all_of(jobs.begin(), jobs.end(),
                                     [](const BootstrapJob& job) { return sums_exact_in_any_order(*job.stats); });
  if (any_order)
    for (auto& job : jobs) job.columns = job.stats->transposed();
  const std::size_t rows_per_chunk = std::max<std::size_t>(1, kChunkDraws / std::max<std::size_t>(1, n_segments));
  std::vector<std::uint32_t> indices;
  for (std::size_t first = 0; first < n_samples; first += rows_per_chunk) {
    const std::size_t rows = std::min(rows_per_chunk, n_samples - first);
    indices.clear();
    rng.choice_into(static_cast<std::uint32_t>(n_segments), rows, indices);
    parallel_ranges(rows, threads, [&](std::size_t begin, std::size_t end) {
      std::vector<float> sum;
      std::vector<float> counts(any_order ? n_segments : 0);
      for (std::size_t r = begin; r < end; ++r) {
        const std::uint32_t* row = indices.data() + r * n_segments;
        if (any_order) {
          std::fill(counts.begin(), counts.end(), 0.0f);
          for (std::size_t j = 0; j < n_segments; ++j) counts[row[j]] += 1.0f;
        }
        for (auto& job : jobs) {
          const std::size_t cols = job.stats->cols;
          sum.resize(cols);
          if (any_order) {
            for (std::size_t c = 0; c < cols; ++c)
              sum[c] = weighted_column_sum(counts.data(), job.columns.data() + c * n_segments, n_segments);
          } else {
            sum_selected(*job.stats, row, n_segments, sum.data());
          }
          job.scores[first + r] = job.metric->score_float32(sum);
        }
      }
    });
  }
}

// numpy's pairwise summation of a contiguous float64 block.
double pairwise_sum(const double* a, std::size_t n) {
  if (n < 8) {
    double result = 0.0;
    for (std::size_t i = 0; i < n; ++i) result += a[i];
    return result;
  }
  if (n <= 128) {
    double r[8];
    for (int k = 0; k < 8; ++k) r[k] = a[k];
    std::size_t i = 8;
    for (; i < n - (n % 8); i += 8)
      for (int k = 0; k < 8; ++k) r[k] += a[i + k];
    double result = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) result += a[i];
    return result;
  }
  std::size_t half = n / 2;
  half -= half % 8;
  return pairwise_sum(a, half) + pairwise_sum(a + half, n - half);
}

// Sorted scores -> numpy mean of the sorted array and half the 95% interval (§9.2 step 5).
Confidence estimate_ci_numpy(std::vector<double> scores) {
  std::sort(scores.begin(), scores.end());
  const std::size_t n = scores.size();
  const std::size_t lower = n / 40;
  const std::size_t upper = n - lower - 1;
  return {numpy_mean(scores), 0.5 * (scores[upper] - scores[lower])};
}

double p_value(std::size_t count, std::size_t n) { return static_cast<double>(count + 1) / static_cast<double>(n + 1); }

// Unsigned big integer (little-endian 64-bit limbs) for the exact mean.
using Limbs = std::vector<std::uint64_t>;

void add_shifted(Limbs& acc, std::uint64_t value, std::size_t shift) {
  const std::size_t limb = shift / 64;
  const unsigned bit = shift % 64;
  const unsigned __int128 wide = static_cast<unsigned __int128>(value) << bit;
  unsigned __int128 carry = 0;
  for (std::size_t i = limb; i < acc.size(); ++i) {
    unsigned __int128 part = carry;
    if (i == limb) part += static_cast<std::uint64_t>(wide);
    if (i == limb + 1) part += static_cast<std::uint64_t>(wide >> 64);
    part += acc[i];
    acc[i] = static_cast<std::uint64_t>(part);
    carry = part >> 64;
    if (carry == 0 && i > limb) break;
  }
}

int compare(const Limbs& a, const Limbs& b) {
  for (std::size_t i = a.size(); i-- > 0;)
    if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
  return 0;
}

Limbs subtract(const Limbs& a, const Limbs& b) {  // a >= b
  Limbs out(a.size());
  std::uint64_t borrow = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const unsigned __int128 lhs = a[i];
    const unsigned __int128 rhs = static_cast<unsigned __int128>(b[i]) + borrow;
    out[i] = static_cast<std::uint64_t>(lhs - rhs);
    borrow = lhs < rhs ? 1 : 0;
  }
  return out;
}

bool bit_at(const Limbs& a, std::size_t bit) { return (a[bit / 64] >> (bit % 64)) & 1u; }

std::size_t bit_length(const Limbs& a) {
  for (std::size_t i = a.size(); i-- > 0;)
    if (a[i]) return i * 64 + 64 - static_cast<std::size_t>(__builtin_clzll(a[i]));
  return 0;
}

}  // namespace

ResamplingSeed ResamplingSeed::parse(const std::string& text) {
  ResamplingSeed seed;
  seed.text = text;
  for (char& c : seed.text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (seed.text == "none") {
    seed.value = std::nullopt;
    return seed;
  }
  // Python int(): surrounding whitespace, an optional '+', digits with single '_' between.
  const auto first = text.find_first_not_of(" \t\n\r\f\v");
  const auto last = text.find_last_not_of(" \t\n\r\f\v");
  std::string digits = first == std::string::npos ? "" : text.substr(first, last - first + 1);
  if (!digits.empty() && digits[0] == '+') digits.erase(0, 1);
  std::uint64_t value = 0;
  bool valid = !digits.empty() && std::isdigit(static_cast<unsigned char>(digits.front())) &&
               std::isdigit(static_cast<unsigned char>(digits.back()));
  for (std::size_t i = 0; valid && i < digits.size(); ++i) {
    const char c = digits[i];
    if (c == '_') {
      valid = digits[i + 1] != '_';
      continue;
    }
    if (!std::isdigit(static_cast<unsigned char>(c)) || value > (UINT64_MAX - 9) / 10)
      valid = false;
    else
      value = value * 10 + static_cast<std::uint64_t>(c - '0');
  }
  if (!valid)
    throw Error("SACREBLEU_SEED: expected a non-negative integer or 'none', got '" + text + "'",
                ErrorKind::bad_option);
  seed.value = value;
  return seed;
}

Stats sum_stats(const std::vector<Stats>& segments) {
  Stats sum(segments.empty() ? 0 : segments[0].size(), 0.0);
  for (const auto& segment : segments)
    for (std::size_t c = 0; c < sum.size() && c < segment.size(); ++c) sum[c] += segment[c];
  return sum;
}

double exact_mean(const std::vector<double>& values) {
  if (values.empty()) throw Error("mean of no values");
  // Every finite double is m * 2^e with e >= -1074: sum the m << (e + 1074) exactly.
  constexpr int kMinExponent = -1074;
  constexpr std::size_t kExtraBits = 128;  // fraction bits kept below 2^-1074 in the quotient
  const std::size_t limbs = (2100 + 64 + kExtraBits) / 64 + 2;
  Limbs positive(limbs, 0), negative(limbs, 0);
  for (double v : values) {
    if (!std::isfinite(v)) return std::nan("");
    if (v == 0.0) continue;
    int exponent = 0;
    const double fraction = std::frexp(std::fabs(v), &exponent);  // v = fraction * 2^exponent
    int e = exponent - 53;
    auto mantissa = static_cast<std::uint64_t>(std::ldexp(fraction, 53));
    if (e < kMinExponent) {  // subnormal: mantissa has trailing zeros to drop
      mantissa >>= (kMinExponent - e);
      e = kMinExponent;
    }
    add_shifted(v > 0 ? positive : negative, mantissa, static_cast<std::size_t>(e - kMinExponent) + kExtraBits);
  }
  const int sign = compare(positive, negative);
  if (sign == 0) return 0.0;
  Limbs total = sign > 0 ? subtract(positive, negative) : subtract(negative, positive);

  // Long division by n, remembering whether anything was left over.
  const auto n = static_cast<std::uint64_t>(values.size());
  unsigned __int128 remainder = 0;
  for (std::size_t i = total.size(); i-- > 0;) {
    const unsigned __int128 current = (remainder << 64) | total[i];
    total[i] = static_cast<std::uint64_t>(current / n);
    remainder = current % n;
  }
  const std::size_t length = bit_length(total);
  if (length == 0) return 0.0;
  // Round the quotient to 53 significant bits, ties to even.
  std::uint64_t mantissa = 0;
  const std::size_t top = length - 1;
  const std::size_t kept = std::min<std::size_t>(53, length);
  for (std::size_t k = 0; k < kept; ++k) mantissa = (mantissa << 1) | (bit_at(total, top - k) ? 1u : 0u);
  int scale = static_cast<int>(length) - static_cast<int>(kept);
  if (length > 53) {
    const std::size_t round_bit = length - 54;
    bool sticky = remainder != 0;
    for (std::size_t b = 0; b < round_bit && !sticky; ++b) sticky = bit_at(total, b);
    if (bit_at(total, round_bit) && (sticky || (mantissa & 1u))) ++mantissa;
  }
  const double magnitude =
      std::ldexp(static_cast<double>(mantissa), scale + kMinExponent - static_cast<int>(kExtraBits));
  return sign > 0 ? magnitude : -magnitude;
}

double numpy_mean(const std::vector<double>& values) {
  constexpr std::size_t kBlock = 8192;  // numpy's reduction buffer size
  double sum = 0.0;
  for (std::size_t begin = 0; begin < values.size(); begin += kBlock)
    sum += pairwise_sum(values.data() + begin, std::min(kBlock, values.size() - begin));
  return sum / static_cast<double>(values.size());
}

Confidence bootstrap_confidence(const Metric& metric, const std::vector<Stats>& segments, std::size_t n_samples,
                                std::optional<std::uint64_t> seed, int threads) {
  if (segments.empty() || n_samples == 0) throw Error("bootstrap resampling needs segments and samples");
  const Float32Matrix matrix(segments);
  std::vector<BootstrapJob> jobs{{&metric, &matrix, {}, {}}};
  NumpyRng rng(seed);
  run_bootstrap(rng, segments.size(), n_samples, jobs, threads);
  std::vector<double> scores = std::move(jobs[0].scores);
  std::sort(scores.begin(), scores.end());
  const std::size_t lower = n_samples / 40;
  const std::size_t upper = n_samples - lower - 1;
  return {exact_mean(scores), 0.5 * (scores[upper] - scores[lower])};
}

namespace {

void check_paired_input(const std::vector<const Metric*>& metrics,
                        const std::vector<std::vector<std::vector<Stats>>>& stats) {
  if (stats.size() < 2) throw Error("paired tests need a baseline and at least one system");
  for (const auto& system : stats) {
    if (system.size() != metrics.size()) throw Error("paired tests: statistics missing for a metric");
    for (const auto& per_metric : system)
      if (per_metric.size() != stats[0][0].size() || per_metric.empty())
        throw Error("paired tests: systems have different numbers of segments");
  }
}

std::vector<double> real_scores(const std::vector<const Metric*>& metrics,
                                const std::vector<std::vector<Stats>>& system) {
  std::vector<double> scores;
  for (std::size_t m = 0; m < metrics.size(); ++m) scores.push_back(metrics[m]->score(sum_stats(system[m])));
  return scores;
}

// The AR masks and the per-block subset sums of (base - system) statistics.
struct MaskedSums {
  const double* tables;  // (2 x blocks) groups of 4 segments x 16 subsets x cols
  std::size_t blocks;
  std::size_t cols;
  unsigned last_block_bits;
  const std::uint32_t* mask;  // trial k, segment i is bit k * segments + i
  std::size_t segments;

  unsigned byte(std::size_t trial, std::size_t block) const {
    const std::size_t bit = trial * segments + block * 8;
    const std::uint64_t window =
        static_cast<std::uint64_t>(mask[bit >> 5]) | static_cast<std::uint64_t>(mask[(bit >> 5) + 1]) << 32;
    const unsigned keep = block + 1 == blocks ? (1u << last_block_bits) - 1u : 0xFFu;
    return static_cast<unsigned>(window >> (bit & 31)) & keep;
  }
};

// deltas[t] = Σ over 4-segment groups of the subset sum selected by trial (first + t)'s
// mask bits.
template <std::size_t Cols>
void accumulate_masked_fixed(const MaskedSums& sums, std::size_t first, std::size_t count, double* deltas) {
  for (std::size_t t = 0; t < count; ++t) {
    double acc[Cols] = {};
    for (std::size_t block = 0; block < sums.blocks; ++block) {
      const unsigned byte = sums.byte(first + t, block);
      const double* low = sums.tables + ((2 * block) * 16 + (byte & 15u)) * Cols;
      const double* high = sums.tables + ((2 * block + 1) * 16 + (byte >> 4)) * Cols;
      for (std::size_t c = 0; c < Cols; ++c) acc[c] += low[c] + high[c];
    }
    for (std::size_t c = 0; c < Cols; ++c) deltas[t * Cols + c] = acc[c];
  }
}

void accumulate_masked(const MaskedSums& sums, std::size_t first, std::size_t count, double* deltas) {
  switch (sums.cols) {
    case 2:
      return accumulate_masked_fixed<2>(sums, first, count, deltas);
    case 10:
      return accumulate_masked_fixed<10>(sums, first, count, deltas);
    case 18:
      return accumulate_masked_fixed<18>(sums, first, count, deltas);
    case 24:
      return accumulate_masked_fixed<24>(sums, first, count, deltas);
    default:
      break;
  }
  const std::size_t cols = sums.cols;
  std::fill(deltas, deltas + count * cols, 0.0);
  for (std::size_t t = 0; t < count; ++t) {
    double* delta = deltas + t * cols;
    for (std::size_t block = 0; block < sums.blocks; ++block) {
      const unsigned byte = sums.byte(first + t, block);
      const double* low = sums.tables + ((2 * block) * 16 + (byte & 15u)) * cols;
      const double* high = sums.tables + ((2 * block + 1) * 16 + (byte >> 4)) * cols;
      for (std::size_t c = 0; c < cols; ++c) delta[c] += low[c] + high[c];
    }
  }
}

}  // namespace

std::vector<std::vector<PairedResult>> paired_bootstrap(const std::vector<const Metric*>& metrics,
                                                        const std::vector<std::vector<std::vector<Stats>>>& stats,
                                                        std::size_t n_samples, const ResamplingSeed& seed,
                                                        int threads) {
  check_paired_input(metrics, stats);
  if (n_samples == 0) throw Error("paired bootstrap needs at least one resample");
  const std::size_t n_systems = stats.size();
  const std::size_t n_metrics = metrics.size();
  const std::size_t n_segments = stats[0][0].size();

  std::vector<std::vector<Float32Matrix>> matrices(n_systems);
  for (std::size_t s = 0; s < n_systems; ++s)
    for (std::size_t m = 0; m < n_metrics; ++m) matrices[s].emplace_back(stats[s][m]);

  // scores[s][m]: system s's resampled scores; baseline_scores[s][m]: the baseline's
  // under the same index matrix as system s.
  std::vector<std::vector<std::vector<double>>> scores(n_systems, std::vector<std::vector<double>>(n_metrics));
  std::vector<std::vector<std::vector<double>>> baseline_scores(n_systems, std::vector<std::vector<double>>(n_metrics));
  const auto system_seed = seed.for_paired_systems();
  const bool shared_matrix = system_seed.has_value() && system_seed == seed.value;

  auto run_stream = [&](std::optional<std::uint64_t> stream_seed, const std::vector<std::size_t>& systems) {
    std::vector<BootstrapJob> jobs;
    for (std::size_t s : systems)
      for (std::size_t m = 0; m < n_metrics; ++m) jobs.push_back({metrics[m], &matrices[s][m], {}, {}});
    NumpyRng rng(stream_seed);
    run_bootstrap(rng, n_segments, n_samples, jobs, threads);
    return jobs;
  };

  if (shared_matrix) {
    std::vector<std::size_t> all(n_systems);
    for (std::size_t s = 0; s < n_systems; ++s) all[s] = s;
    auto jobs = run_stream(seed.value, all);
    for (std::size_t s = 0; s < n_systems; ++s)
      for (std::size_t m = 0; m < n_metrics; ++m) {
        scores[s][m] = std::move(jobs[s * n_metrics + m].scores);
        baseline_scores[s][m] = scores[0][m];
      }
  } else {
    auto baseline_jobs = run_stream(seed.value, {0});
    for (std::size_t m = 0; m < n_metrics; ++m) scores[0][m] = std::move(baseline_jobs[m].scores);
    for (std::size_t s = 1; s < n_systems; ++s) {
      auto jobs = run_stream(system_seed, {0, s});
      for (std::size_t m = 0; m < n_metrics; ++m) {
        baseline_scores[s][m] = std::move(jobs[m].scores);
        scores[s][m] = std::move(jobs[n_metrics + m].scores);
      }
    }
  }

  const std::vector<double> baseline_real = real_scores(metrics, stats[0]);
  std::vector<std::vector<PairedResult>> results(n_systems, std::vector<PairedResult>(n_metrics));
  for (std::size_t m = 0; m < n_metrics; ++m) {
    const Confidence confidence = estimate_ci_numpy(scores[0][m]);
    results[0][m] = {baseline_real[m], std::nullopt, confidence.mean, confidence.ci};
  }
  for (std::size_t s = 1; s < n_systems; ++s) {
    const std::vector<double> real = real_scores(metrics, stats[s]);
    for (std::size_t m = 0; m < n_metrics; ++m) {
      const double diff = std::fabs(baseline_real[m] - real[m]);
      const Confidence confidence = estimate_ci_numpy(scores[s][m]);
      std::vector<double> deltas(n_samples);
      for (std::size_t k = 0; k < n_samples; ++k) deltas[k] = std::fabs(scores[s][m][k] - baseline_scores[s][m][k]);
      const double mean_delta = numpy_mean(deltas);
      std::size_t count = 0;
      for (double delta : deltas)
        if (delta - mean_delta > diff) ++count;
      results[s][m] = {real[m], p_value(count, n_samples), confidence.mean, confidence.ci};
    }
  }
  return results;
}

std::vector<std::vector<PairedResult>> paired_approximate_randomization(
    const std::vector<const Metric*>& metrics, const std::vector<std::vector<std::vector<Stats>>>& stats,
    std::size_t n_trials, const ResamplingSeed& seed, int threads) {
  check_paired_input(metrics, stats);
  if (n_trials == 0) throw Error("approximate randomization needs at least one trial");
  const std::size_t n_systems = stats.size();
  const std::size_t n_metrics = metrics.size();
  const std::size_t n_segments = stats[0][0].size();
  const auto system_seed = seed.for_paired_systems();

  const std::vector<double> baseline_real = real_scores(metrics, stats[0]);
  std::vector<std::vector<PairedResult>> results(n_systems, std::vector<PairedResult>(n_metrics));
  for (std::size_t m = 0; m < n_metrics; ++m) results[0][m].score = baseline_real[m];

  std::vector<std::uint32_t> mask;
  for (std::size_t s = 1; s < n_systems; ++s) {
    // A fresh generator per system: with a fixed seed every system sees the same masks.
    if (s == 1 || !system_seed) {
      mask = NumpyRng(system_seed).bool_words(n_trials * n_segments);
      mask.push_back(0);  // lets the last 8-bit window read one word past the end
    }
    const std::vector<double> real = real_scores(metrics, stats[s]);
    for (std::size_t m = 0; m < n_metrics; ++m) {
      const auto& base = stats[0][m];
      const auto& system = stats[s][m];
      const std::size_t cols = base[0].size();
      // Shuffled pseudo-systems: A = sys + D, B = base - D with D = sum over masked
      // segments of (base - sys). Exact, as the statistics are integers or small dyadics,
      // so D may be summed in any order: per group of 4 segments, a table of all 16
      // subset sums turns 4 mask bits into one lookup (small enough to stay in cache).
      const std::size_t blocks = (n_segments + 7) / 8;
      std::vector<double> subset_sums(blocks * 2 * 16 * cols, 0.0);
      for (std::size_t g = 0; g < blocks * 2; ++g) {
        double* table = subset_sums.data() + g * 16 * cols;
        for (unsigned subset = 1; subset < 16; ++subset) {
          const unsigned lowest = static_cast<unsigned>(__builtin_ctz(subset));
          const double* rest = table + (subset & (subset - 1)) * cols;
          double* out = table + subset * cols;
          const std::size_t i = g * 4 + lowest;
          for (std::size_t c = 0; c < cols; ++c) out[c] = rest[c] + (i < n_segments ? base[i][c] - system[i][c] : 0.0);
        }
      }
      const unsigned last_block_bits = static_cast<unsigned>(n_segments - (blocks - 1) * 8);
      const Stats base_total = sum_stats(base);
      const Stats system_total = sum_stats(system);
      const double diff = std::fabs(baseline_real[m] - real[m]);
      std::vector<std::uint8_t> exceeds(n_trials, 0);
      constexpr std::size_t kTrialChunk = 256;
      const std::size_t n_chunks = (n_trials + kTrialChunk - 1) / kTrialChunk;
      parallel_ranges(n_chunks, threads, [&](std::size_t chunk_begin, std::size_t chunk_end) {
        std::vector<double> deltas(kTrialChunk * cols);
        Stats a(cols), b(cols);
        for (std::size_t chunk = chunk_begin; chunk < chunk_end; ++chunk) {
          const std::size_t first = chunk * kTrialChunk;
          const std::size_t count = std::min(kTrialChunk, n_trials - first);
          std::fill(deltas.begin(), deltas.end(), 0.0);
          const MaskedSums sums{subset_sums.data(), blocks, cols, last_block_bits, mask.data(), n_segments};
          accumulate_masked(sums, first, count, deltas.data());
          for (std::size_t t = 0; t < count; ++t) {
            const double* delta = deltas.data() + t * cols;
            for (std::size_t c = 0; c < cols; ++c) {
              a[c] = system_total[c] + delta[c];
              b[c] = base_total[c] - delta[c];
            }
            exceeds[first + t] = std::fabs(metrics[m]->score(a) - metrics[m]->score(b)) > diff;
          }
        }
      });
      std::size_t count = 0;
      for (auto e : exceeds) count += e;
      results[s][m] = {real[m], p_value(count, n_trials), std::nullopt, std::nullopt};
    }
  }
  return results;
}

}  // namespace csan::scoring
