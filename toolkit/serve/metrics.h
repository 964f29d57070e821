// GET /metrics: the server's counters in Prometheus' text format (version 0.0.4). Requests
// by route and status, errors by kind, queue lengths, batch sizes, request latency, and the
// sentences and tokens translated (their rates are Prometheus' rate() of the counters;
// csan_serve_translate_seconds_total is the time the models were busy). Thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace csan::serve {

// Cumulative buckets, as Prometheus histograms count: each bound counts the observations <= it.
class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds);
  void observe(double value);
  // NAME_bucket{le="..."}, NAME_sum and NAME_count lines.
  void render(const std::string& name, std::string& out) const;

 private:
  std::vector<double> bounds_;
  std::vector<uint64_t> counts_;  // one per bound, then +Inf
  double sum_ = 0;
  uint64_t count_ = 0;
};

class Metrics {
 public:
  Metrics();
  // One answered HTTP request (any route, any status).
  void request(const std::string& route, int status, double seconds);
  // A refused or failed /translate request: bad_request, too_large, unknown_model,
  // queue_full, timeout, translation_failed.
  void error(const std::string& kind);
  // One batch the batcher translated.
  void batch(size_t sentences, int64_t source_tokens, int64_t target_tokens, double seconds);
  // The batcher gave the heap's free pages back to the kernel.
  void memory_released();
  // The exposition text; `queued` gives each model's queue length at the moment of the scrape.
  std::string render(const std::vector<std::pair<std::string, size_t>>& queued) const;

 private:
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, int>, uint64_t> requests_;
  std::map<std::string, uint64_t> errors_;
  Histogram latency_, batch_sentences_;
  uint64_t batches_ = 0, sentences_ = 0, source_tokens_ = 0, target_tokens_ = 0;
  double busy_seconds_ = 0;
  uint64_t memory_releases_ = 0;
};

}  // namespace csan::serve
