#include "toolkit/core/cpu_flags.h"

#include <fstream>
#include <sstream>

namespace csan::core {

namespace {

struct CpuInfo {
  std::string model = "unknown";
  std::set<std::string> flags;
};

const CpuInfo& cpu_info() {
  static const CpuInfo info = [] {
    CpuInfo read;
    std::ifstream in("/proc/cpuinfo");
    bool have_flags = false;
    for (std::string line; std::getline(in, line);) {
      const auto colon = line.find(':');
      if (colon == std::string::npos) continue;
      const std::string value = colon + 2 <= line.size() ? line.substr(colon + 2) : "";
      if (line.rfind("model name", 0) == 0 && read.model == "unknown") read.model = value;
      if (line.rfind("flags", 0) == 0 && !have_flags) {
        have_flags = true;
        std::istringstream words(value);
        for (std::string w; words >> w;) read.flags.insert(w);
      }
    }
    return read;
  }();
  return info;
}

}  // namespace

const std::string& cpu_model_name() { return cpu_info().model; }
const std::set<std::string>& cpu_flags() { return cpu_info().flags; }
bool cpu_has(const std::string& flag) { return cpu_info().flags.count(flag) > 0; }

}  // namespace csan::core
