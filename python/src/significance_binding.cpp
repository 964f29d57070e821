// Bootstrap confidence intervals and paired significance tests on statistics already
// extracted (SegmentStatistics), with sacreBLEU's seeds and numbers.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings.h"
#include "segment_statistics.h"
#include "toolkit/core/error.h"
#include "toolkit/scoring/resampling.h"

namespace py = pybind11;

namespace csan::python {

namespace {

using scoring::Metric;

std::size_t checked_count(long long n, const char* what) {
  if (n < 1 || static_cast<unsigned long long>(n) > scoring::kMaxResamples)
    throw Error(
        std::string(what) + ": expected 1 to " + std::to_string(scoring::kMaxResamples) + ", got " + std::to_string(n),
        ErrorKind::bad_option);
  return static_cast<std::size_t>(n);
}

// threads: 0 uses every core (what n_jobs 0 and 1 mean here), N > 0 that many.
int checked_threads(int threads) {
  if (threads < 0)
    throw Error("n_jobs: expected 0 or a positive number of threads, got " + std::to_string(threads),
                ErrorKind::bad_option);
  return threads;
}

py::tuple bootstrap(const Metric& metric, const SegmentStatistics& stats, long long n_samples,
                    const std::string& seed_text, int threads) {
  const std::size_t n = checked_count(n_samples, "n_bootstrap");
  const scoring::ResamplingSeed seed = scoring::ResamplingSeed::parse(seed_text);
  threads = checked_threads(threads);
  scoring::Confidence confidence;
  {
    py::gil_scoped_release unlocked;
    confidence = scoring::bootstrap_confidence(metric, stats.rows, n, seed.value, threads);
  }
  return py::make_tuple(confidence.mean, confidence.ci, seed.text);
}

// stats[system][metric]; system 0 is the baseline. Returns (results[system][metric] as
// (score, p_value, mean, ci) tuples, the seed as paired signatures print it).
py::tuple paired(const std::string& test, const std::vector<std::shared_ptr<Metric>>& metrics,
                 const std::vector<std::vector<std::shared_ptr<SegmentStatistics>>>& stats, long long n_samples,
                 const std::string& seed_text, int threads) {
  if (test != "bs" && test != "ar")
    throw Error("test_type: expected 'bs' or 'ar', got '" + test + "'", ErrorKind::bad_option);
  const std::size_t n = checked_count(n_samples, "n_samples");
  const scoring::ResamplingSeed seed = scoring::ResamplingSeed::parse(seed_text);
  threads = checked_threads(threads);
  std::vector<const Metric*> metric_list;
  for (const auto& metric : metrics) metric_list.push_back(metric.get());
  std::vector<std::vector<std::vector<scoring::Stats>>> rows(stats.size());
  for (std::size_t s = 0; s < stats.size(); ++s) {
    if (stats[s].size() != metrics.size())
      throw Error("paired test: system " + std::to_string(s) + " has statistics for " +
                      std::to_string(stats[s].size()) + " metrics, expected " + std::to_string(metrics.size()),
                  ErrorKind::bad_input);
    for (const auto& per_metric : stats[s]) rows[s].push_back(per_metric->rows);
  }
  std::vector<std::vector<scoring::PairedResult>> results;
  {
    py::gil_scoped_release unlocked;
    results = test == "bs" ? scoring::paired_bootstrap(metric_list, rows, n, seed, threads)
                           : scoring::paired_approximate_randomization(metric_list, rows, n, seed, threads);
  }
  py::list table;
  for (const auto& system : results) {
    py::list row;
    for (const auto& r : system) row.append(py::make_tuple(r.score, r.p_value, r.mean, r.ci));
    table.append(row);
  }
  return py::make_tuple(table, seed.paired_text());
}

}  // namespace

void bind_significance(py::module_& m) {
  m.attr("MAX_RESAMPLES") = scoring::kMaxResamples;
  m.def(
      "paired_seed_text", [](const std::string& text) { return scoring::ResamplingSeed::parse(text).paired_text(); },
      py::arg("seed"));
  m.def("bootstrap_confidence", &bootstrap, py::arg("metric"), py::arg("stats"), py::arg("n_samples"), py::arg("seed"),
        py::arg("threads"));
  m.def("paired_test", &paired, py::arg("test_type"), py::arg("metrics"), py::arg("stats"), py::arg("n_samples"),
        py::arg("seed"), py::arg("threads"));
}

}  // namespace csan::python
