// Progress display and machine-readable logs. On a terminal, long work redraws one
// status line (throttled); when stderr is piped or a file, nothing is redrawn, so logs
// stay clean. Metrics for plotting go to JSON-lines files.
#pragma once

#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
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
  void update(long long done, const std::string& tail = "");
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
};

// "1h02m", "3m05s", "12s": compact durations for progress lines and summaries.
std::string format_duration(double seconds);

// One JSON object per line, appended; values are numbers or strings.
class JsonLinesWriter {
 public:
  using Value = std::variant<long long, double, std::string>;
  explicit JsonLinesWriter(const std::string& path, bool append = true);
  ~JsonLinesWriter();
  void write(const std::map<std::string, Value>& record);

 private:
  std::FILE* file_ = nullptr;
};

std::string json_escape(const std::string& s);

}  // namespace csan
