#include "toolkit/serve/metrics.h"

#include <cstdio>

namespace csan::serve {

namespace {

std::string prometheus_number(double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.17g", v);
  return buffer;
}

void help_header(std::string& out, const std::string& name, const char* type, const char* help) {
  out += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

// Label values are model names and routes; Prometheus escapes \, " and newlines in them.
std::string label_value(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

}  // namespace

Histogram::Histogram(std::vector<double> bounds) : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::observe(double value) {
  size_t i = 0;
  while (i < bounds_.size() && value > bounds_[i]) ++i;
  ++counts_[i];
  sum_ += value;
  ++count_;
}

void Histogram::render(const std::string& name, std::string& out) const {
  uint64_t cumulative = 0;
  for (size_t i = 0; i <= bounds_.size(); ++i) {
    cumulative += counts_[i];
    const std::string le = i < bounds_.size() ? prometheus_number(bounds_[i]) : "+Inf";
    out += name + "_bucket{le=\"" + le + "\"} " + std::to_string(cumulative) + "\n";
  }
  out += name + "_sum " + prometheus_number(sum_) + "\n" + name + "_count " + std::to_string(count_) + "\n";
}

Metrics::Metrics()
    : latency_({0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}),
      batch_sentences_({1, 2, 4, 8, 16, 32, 64, 128, 256, 512}) {}

void Metrics::request(const std::string& route, int status, double seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++requests_[{route, status}];
  if (route == "/translate") latency_.observe(seconds);
}

void Metrics::error(const std::string& kind) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++errors_[kind];
}

void Metrics::batch(size_t sentences, int64_t source_tokens, int64_t target_tokens, double seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  batch_sentences_.observe(static_cast<double>(sentences));
  ++batches_;
  sentences_ += sentences;
  source_tokens_ += static_cast<uint64_t>(source_tokens);
  target_tokens_ += static_cast<uint64_t>(target_tokens);
  busy_seconds_ += seconds;
}

void Metrics::memory_released() {
  std::lock_guard<std::mutex> lock(mutex_);
  ++memory_releases_;
}

std::string Metrics::render(const std::vector<std::pair<std::string, size_t>>& queued) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string out;
  help_header(out, "csan_serve_requests_total", "counter", "HTTP requests answered, by route and status.");
  for (const auto& [key, count] : requests_)
    out += "csan_serve_requests_total{route=\"" + label_value(key.first) + "\",status=\"" + std::to_string(key.second) +
           "\"} " + std::to_string(count) + "\n";
  help_header(out, "csan_serve_errors_total", "counter", "Translation requests refused or failed, by kind.");
  for (const auto& [kind, count] : errors_)
    out += "csan_serve_errors_total{kind=\"" + kind + "\"} " + std::to_string(count) + "\n";
  help_header(out, "csan_serve_queue_length", "gauge", "Requests waiting for a batch, by model.");
  for (const auto& [model, length] : queued)
    out += "csan_serve_queue_length{model=\"" + label_value(model) + "\"} " + std::to_string(length) + "\n";
  help_header(out, "csan_serve_request_duration_seconds", "histogram", "Time from a /translate request to its answer.");
  latency_.render("csan_serve_request_duration_seconds", out);
  help_header(out, "csan_serve_batch_sentences", "histogram", "Sentences per translated batch.");
  batch_sentences_.render("csan_serve_batch_sentences", out);
  help_header(out, "csan_serve_sentences_total", "counter", "Sentences translated.");
  out += "csan_serve_sentences_total " + std::to_string(sentences_) + "\n";
  help_header(out, "csan_serve_source_tokens_total", "counter", "Source tokens translated (</s> included).");
  out += "csan_serve_source_tokens_total " + std::to_string(source_tokens_) + "\n";
  help_header(out, "csan_serve_target_tokens_total", "counter",
              "Target tokens produced (best hypotheses, </s> included).");
  out += "csan_serve_target_tokens_total " + std::to_string(target_tokens_) + "\n";
  help_header(out, "csan_serve_translate_seconds_total", "counter", "Time the models spent translating batches.");
  out += "csan_serve_translate_seconds_total " + prometheus_number(busy_seconds_) + "\n";
  help_header(out, "csan_serve_memory_releases_total", "counter",
              "Times free heap pages were given back to the kernel (--release-memory-ms).");
  out += "csan_serve_memory_releases_total " + std::to_string(memory_releases_) + "\n";
  return out;
}

}  // namespace csan::serve
