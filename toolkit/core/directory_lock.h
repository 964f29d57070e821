// An exclusive lock on a directory that one process writes (csan-train's save dir): two
// runs on one directory would interleave metrics.jsonl and overwrite each other's
// checkpoints. flock() on DIR/.csan.lock, which holds the owner's pid: the kernel
// releases the lock when the process ends however it ends, so a lock left by a crash is
// never stale, and the file itself is harmless.
#pragma once

#include <string>

namespace csan::core {

class DirectoryLock {
 public:
  // Takes the lock (the directory must exist). Throws csan::Error naming the directory
  // and the pid that holds it when another process does, at once (no waiting).
  explicit DirectoryLock(const std::string& dir);
  ~DirectoryLock();
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;

  static std::string lock_file(const std::string& dir) { return dir + "/.csan.lock"; }

 private:
  int fd_ = -1;
};

}  // namespace csan::core
