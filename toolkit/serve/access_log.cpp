#include "toolkit/serve/access_log.h"

#include <chrono>
#include <cstdio>
#include <ctime>

namespace csan::serve {

namespace {

std::string utc_now() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  const auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char buffer[80];
  std::snprintf(buffer, sizeof buffer, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(millis));
  return buffer;
}

}  // namespace

void AccessLog::write(const std::string& client, const std::string& method, const std::string& path, int status,
                      size_t sentences, double milliseconds) {
  char ms[32];
  std::snprintf(ms, sizeof ms, "%.1f", milliseconds);
  // Paths come from clients: keep the line one line whatever they sent.
  std::string safe_path;
  for (char c : path) safe_path += (static_cast<unsigned char>(c) < 0x20 || c == ' ') ? '?' : c;
  const std::string line = utc_now() + " " + client + " " + method + " " + safe_path + " " + std::to_string(status) +
                           " " + std::to_string(sentences) + " " + ms + "\n";
  std::lock_guard<std::mutex> lock(mutex_);
  out_ << line << std::flush;
}

}  // namespace csan::serve
