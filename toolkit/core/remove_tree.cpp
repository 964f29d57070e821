#include "toolkit/core/remove_tree.h"

#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

namespace csan {

namespace {
int remove_entry(const char* path, const struct stat*, int, struct FTW*) {
  return std::remove(path) == 0 || errno == ENOENT ? 0 : -1;
}
}  // namespace

bool remove_tree(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return errno == ENOENT;
  // Children before their directory, symbolic links removed rather than followed.
  return ::nftw(path.c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS) == 0;
}

}  // namespace csan
