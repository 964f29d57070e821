#include "toolkit/core/cpu_threads.h"

#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

namespace csan::core {

namespace {

unsigned affinity_cpu_count() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return static_cast<unsigned>(CPU_COUNT(&set));
  return std::thread::hardware_concurrency();
}

// The quota of this process's own cgroup (cgroup v2: one line "0::/PATH" in
// /proc/self/cgroup); nullopt under cgroup v1 or without a limit.
std::optional<unsigned> own_cgroup_cpu_limit() {
  std::ifstream groups("/proc/self/cgroup");
  for (std::string line; std::getline(groups, line);) {
    if (line.rfind("0::", 0) != 0) continue;
    std::ifstream max_file("/sys/fs/cgroup" + line.substr(3) + "/cpu.max");
    std::string text;
    if (!std::getline(max_file, text)) return std::nullopt;
    return cgroup_cpu_limit(text);
  }
  return std::nullopt;
}

}  // namespace

std::optional<unsigned> cgroup_cpu_limit(const std::string& cpu_max) {
  std::istringstream fields(cpu_max);
  std::string quota_text;
  long long period = 0;
  if (!(fields >> quota_text >> period) || period <= 0 || quota_text == "max") return std::nullopt;
  char* end = nullptr;
  const long long quota = std::strtoll(quota_text.c_str(), &end, 10);
  if (end == quota_text.c_str() || *end != '\0' || quota <= 0) return std::nullopt;
  return static_cast<unsigned>(std::max<long long>(1, (quota + period - 1) / period));
}

unsigned usable_cpu_count() {
  unsigned cpus = std::max(1u, affinity_cpu_count());
  if (const auto limit = own_cgroup_cpu_limit()) cpus = std::min(cpus, *limit);
  return cpus;
}

std::optional<std::string> thread_count_variable() {
  for (const char* name : {"OMP_NUM_THREADS", "MKL_NUM_THREADS"}) {
    const char* value = std::getenv(name);
    if (value && *value) return name;
  }
  return std::nullopt;
}

}  // namespace csan::core
