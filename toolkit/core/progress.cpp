#include "toolkit/core/progress.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

#include "toolkit/core/error.h"
#include "toolkit/core/json_text.h"

namespace csan {

bool stderr_is_tty() { return ::isatty(STDERR_FILENO) == 1; }

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  long s = std::lround(seconds);
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%ldh%02ldm", s / 3600, (s % 3600) / 60);
  else if (s >= 60)
    std::snprintf(buf, sizeof buf, "%ldm%02lds", s / 60, s % 60);
  else
    std::snprintf(buf, sizeof buf, "%lds", s);
  return buf;
}

ProgressLine::ProgressLine(std::string label, long long total, bool force)
    : label_(std::move(label)),
      total_(total),
      enabled_(force || stderr_is_tty()),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_ - std::chrono::seconds(1)) {}

ProgressLine::~ProgressLine() { finish(); }

std::optional<double> remaining_seconds(double seconds, long long first_done, long long done, long long total) {
  if (done <= first_done || total <= 0) return std::nullopt;
  return seconds * static_cast<double>(std::max(0LL, total - done)) / static_cast<double>(done - first_done);
}

void ProgressLine::update(long long done, const std::string& tail, std::optional<double> eta_seconds) {
  if (!enabled_) return;
  auto now = std::chrono::steady_clock::now();
  if (first_done_ < 0) {
    first_done_ = done;
    first_update_ = now;
  }
  // Redrawing more than ~10 times a second costs time and shows nothing new.
  if (now - last_draw_ < std::chrono::milliseconds(100) && !(total_ > 0 && done >= total_)) return;
  last_draw_ = now;
  std::string line = label_ + " " + std::to_string(done);
  if (total_ > 0) {
    char pct[64];
    std::snprintf(pct, sizeof pct, "/%lld (%.0f%%)", total_, 100.0 * done / total_);
    line += pct;
    if (!eta_seconds)
      eta_seconds =
          remaining_seconds(std::chrono::duration<double>(now - first_update_).count(), first_done_, done, total_);
    if (eta_seconds) line += " ETA " + format_duration(*eta_seconds);
  }
  if (!tail.empty()) line += " | " + tail;
  std::fprintf(stderr, "\r\033[K%s", line.c_str());
  std::fflush(stderr);
  drawn_ = true;
}

void ProgressLine::finish() {
  if (enabled_ && drawn_) {
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
  }
  drawn_ = false;
}

JsonLinesWriter::JsonLinesWriter(const std::string& path, bool append) {
  file_ = std::fopen(path.c_str(), append ? "a" : "w");
  if (!file_) throw Error(path + ": cannot write: " + std::strerror(errno));
}

JsonLinesWriter::~JsonLinesWriter() {
  if (file_) std::fclose(file_);
}

void JsonLinesWriter::write(const std::map<std::string, Value>& record) {
  nlohmann::ordered_json object = nlohmann::ordered_json::object();
  for (const auto& entry : record) std::visit([&](const auto& v) { object[entry.first] = v; }, entry.second);
  const std::string line = core::json_text(object) + "\n";
  std::fputs(line.c_str(), file_);
  std::fflush(file_);  // a crash must not lose already-logged metrics
}

}  // namespace csan
