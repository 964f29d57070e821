// One line per HTTP request, written whole (concurrent requests never interleave):
//   2026-11-28T03:40:00.123Z 127.0.0.1 POST /translate 200 3 12.4
// UTC time, client address, method, path, status, sentences translated, milliseconds.
#pragma once

#include <mutex>
#include <ostream>
#include <string>

namespace csan::serve {

class AccessLog {
 public:
  explicit AccessLog(std::ostream& out) : out_(out) {}
  void write(const std::string& client, const std::string& method, const std::string& path, int status,
             size_t sentences, double milliseconds);

 private:
  std::mutex mutex_;
  std::ostream& out_;
};

}  // namespace csan::serve
