#include "toolkit/core/process_memory.h"

#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace csan::core {

double resident_mib() {
  std::ifstream statm("/proc/self/statm");
  long long total_pages = 0, resident_pages = 0;
  if (!(statm >> total_pages >> resident_pages)) return 0;
  return static_cast<double>(resident_pages) * static_cast<double>(sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
}

double peak_resident_mib() {
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // Linux reports KiB
}

namespace {

// One mapping of /proc/self/smaps: its header and the counters release_clean_library_pages reads.
struct Mapping {
  uintptr_t start = 0, end = 0;
  std::string perms, path;
  long rss_kib = 0, private_dirty_kib = 0, anonymous_kib = 0;
};

bool is_shared_object(const std::string& path, const std::string& executable) {
  const auto so = path.find(".so");
  return path == executable || (so != std::string::npos && (so + 3 == path.size() || path[so + 3] == '.'));
}

std::vector<Mapping> read_mappings() {
  std::vector<Mapping> mappings;
  std::ifstream smaps("/proc/self/smaps");
  for (std::string line; std::getline(smaps, line);) {
    const auto colon = line.find(':');
    const auto dash = line.find('-');
    // A header: "start-end perms offset dev inode [path]"; a field: "Name:   value kB".
    if (dash != std::string::npos && (colon == std::string::npos || dash < colon)) {
      std::istringstream header(line);
      std::string range, offset, device, inode;
      Mapping m;
      header >> range >> m.perms >> offset >> device >> inode;
      std::getline(header >> std::ws, m.path);
      m.start = std::strtoull(range.substr(0, dash).c_str(), nullptr, 16);
      m.end = std::strtoull(range.substr(dash + 1).c_str(), nullptr, 16);
      mappings.push_back(m);
    } else if (!mappings.empty() && colon != std::string::npos) {
      const std::string name = line.substr(0, colon);
      const long kib = std::atol(line.c_str() + colon + 1);
      if (name == "Rss") mappings.back().rss_kib = kib;
      if (name == "Private_Dirty") mappings.back().private_dirty_kib = kib;
      if (name == "Anonymous") mappings.back().anonymous_kib = kib;
    }
  }
  return mappings;
}

}  // namespace

long release_clean_library_pages() {
  char exe[4096];
  const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  const std::string executable = n > 0 ? std::string(exe, static_cast<size_t>(n)) : std::string();
  long released = 0;
  for (const Mapping& m : read_mappings()) {
    // Private ('p') and never writable: no page of it can become the process's own after
    // this was read. Anonymous and dirty pages (relocated data made read-only afterwards)
    // would be lost by MADV_DONTNEED: such mappings are skipped whole.
    if (m.perms.size() < 4 || m.perms[1] == 'w' || m.perms[3] != 'p' || m.rss_kib == 0) continue;
    if (m.private_dirty_kib != 0 || m.anonymous_kib != 0 || !is_shared_object(m.path, executable)) continue;
    if (::madvise(reinterpret_cast<void*>(m.start), m.end - m.start, MADV_DONTNEED) == 0) released += m.rss_kib;
  }
  return released;
}

}  // namespace csan::core
