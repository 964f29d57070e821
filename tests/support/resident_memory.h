// What this test process holds in memory, for the tests of mappings and of releasing pages
// (one copy instead of one per test file).
#pragma once

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace csan::testing {

// A fresh folder of this process's own under the temporary directory, named after `what`,
// and `name` in it.
inline std::filesystem::path process_scratch(const std::string& what, const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("csan-" + what + "-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir / name;
}

// This process's resident KiB of the mapping that holds `address` (/proc/self/smaps), or -1.
inline long resident_kib_of(const void* address) {
  std::ifstream smaps("/proc/self/smaps");
  const auto at = reinterpret_cast<uintptr_t>(address);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    uintptr_t from = 0, to = 0;
    char dash = 0;
    std::istringstream range(line);
    if (range >> std::hex >> from >> dash >> to && dash == '-' && line.find(':') > line.find(' ')) {
      inside = from <= at && at < to;
      continue;
    }
    if (inside && line.rfind("Rss:", 0) == 0) return std::stol(line.substr(4));
  }
  return -1;
}

}  // namespace csan::testing
