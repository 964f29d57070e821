// Confidence intervals and paired significance tests by resampling per-segment
// statistics (spec §9). Statistics are extracted once by the metric; every resample
// only sums rows and scores the sums, exactly as sacreBLEU 2.6.0 does it (float32 sums,
// numpy's pairwise mean, numpy's random draws), so the numbers match to the last bit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "toolkit/scoring/metric.h"

namespace csan::scoring {

// The most resamples (-cin, -pbsn) or trials (-parn) csan-score runs. sacreBLEU keeps an
// index matrix of 8 bytes per resample and segment, so 10^7 resamples of a 1000-segment
// test set need 80 GB there; here each one costs 8 bytes per system and metric, but the
// time still grows with resamples x segments (10^7 x 3000 segments: minutes).
inline constexpr std::size_t kMaxResamples = 10'000'000;

// How SACREBLEU_SEED was given: a number, or "none" (OS entropy).
struct ResamplingSeed {
  std::optional<std::uint64_t> value = 12345;
  // The variable's text lowercased: -ci signatures print it as given ("seed:12345").
  std::string text = "12345";

  // Parses the environment value as sacreBLEU does (int(value), or "none" in any case);
  // throws csan::Error for anything else.
  static ResamplingSeed parse(const std::string& text);
  // Paired tests treat seed 0 like "none" for the compared systems (spec §9.6).
  std::optional<std::uint64_t> for_paired_systems() const { return value && *value != 0 ? value : std::nullopt; }
  // Paired-test signatures print str(int(value)) or "none".
  std::string paired_text() const { return value ? std::to_string(*value) : "none"; }
};

struct Confidence {
  double mean = 0.0;
  double ci = 0.0;
};

struct PairedResult {
  double score = 0.0;
  std::optional<double> p_value;
  std::optional<double> mean;
  std::optional<double> ci;
};

// Element-wise sum of segment statistics in double, in segment order.
Stats sum_stats(const std::vector<Stats>& segments);

// Python statistics.mean: the exact rational mean rounded once to double.
double exact_mean(const std::vector<double>& values);
// numpy's ndarray.mean() of a float64 vector (pairwise sums in 8192-element blocks).
double numpy_mean(const std::vector<double>& values);

// Single-system bootstrap confidence (-ci, spec §9.2): mean is the exact mean.
Confidence bootstrap_confidence(const Metric& metric, const std::vector<Stats>& segments, std::size_t n_samples,
                                std::optional<std::uint64_t> seed, int threads = 0);

// Paired bootstrap resampling (--paired-bs, spec §9.3). stats[system][metric] holds the
// per-segment statistics; system 0 is the baseline. Returns results[system][metric].
std::vector<std::vector<PairedResult>> paired_bootstrap(const std::vector<const Metric*>& metrics,
                                                        const std::vector<std::vector<std::vector<Stats>>>& stats,
                                                        std::size_t n_samples, const ResamplingSeed& seed,
                                                        int threads = 0);

// Paired approximate randomization (--paired-ar, spec §9.4); no mean or CI.
std::vector<std::vector<PairedResult>> paired_approximate_randomization(
    const std::vector<const Metric*>& metrics, const std::vector<std::vector<std::vector<Stats>>>& stats,
    std::size_t n_trials, const ResamplingSeed& seed, int threads = 0);

}  // namespace csan::scoring
