// Progress display and machine-readable logs. On a terminal, long work redraws one
// status line (throttled); when stderr is piped or a file, nothing is redrawn, so logs
// stay clean. Metrics for plotting go to JSON-lines files.
#pragma once

#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>

namespace csan {

bool stderr_is_tty();

class ProgressLine {
 public:
  // total <= 0 means unknown (no ETA). Output is suppressed unless stderr is a TTY
  // (or force is set, which tests use).
  explicit ProgressLine(std::string label, long long total = 0, bool force = false);
  ~ProgressLine();

  // Sets the current count and an optional free-form tail ("loss 3.21 | 1234 tok/s").
  // The ETA is `eta_seconds` when the caller knows better (csan-train: its recent pace),
  // else the pace since the first update() (see remaining_seconds).
  void update(long long done, const std::string& tail = "", std::optional<double> eta_seconds = std::nullopt);
  // Clears the line so following output starts at column 0.
  void finish();

  bool enabled() const { return enabled_; }

 private:
  std::string label_;
  long long total_;
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
  std::chrono::steady_clock::time_point first_update_;
  long long first_done_ = -1;
};

// Seconds until `total` at the pace since the first count seen: `seconds` after it, the
// count went from `first_done` to `done`. Counting from the first count, not from zero,
// keeps a count that starts high (a resumed run at update 3,000 of 4,000) from looking as
// if it had done 3,000 in no time. nullopt before any progress.
std::optional<double> remaining_seconds(double seconds, long long first_done, long long done, long long total);

// "1h02m", "3m05s", "12s": compact durations for progress lines and summaries.
std::string format_duration(double seconds);

// One JSON object per line, appended, keys in sorted order (core::json_text's layout:
// {"a": 1, "b": "x"}); values are numbers or strings, non-finite numbers null.
class JsonLinesWriter {
 public:
  using Value = std::variant<long long, double, std::string>;
  explicit JsonLinesWriter(const std::string& path, bool append = true);
  ~JsonLinesWriter();
  void write(const std::map<std::string, Value>& record);

 private:
  std::FILE* file_ = nullptr;
};

}  // namespace csan
