// The flags line of /proc/cpuinfo, read independently of toolkit/core/cpu_flags (which
// the tests check against it): " flag1 flag2 ... " with a space on both sides of every
// flag, so that has(" avx512_bf16 ") cannot match a longer flag; nullopt without the file.
#pragma once

#include <fstream>
#include <optional>
#include <string>

namespace csan::testing {

inline std::optional<std::string> cpuinfo_flags() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  if (!cpuinfo) return std::nullopt;
  for (std::string line; std::getline(cpuinfo, line);)
    if (line.rfind("flags", 0) == 0) return " " + line.substr(line.find(':') + 1) + " ";
  return std::string();
}

}  // namespace csan::testing
