#include "toolkit/core/atomic_file.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "toolkit/core/direct_file_writer.h"
#include "toolkit/core/error.h"
#include "toolkit/core/remove_tree.h"
#include "toolkit/core/temporary_paths.h"

namespace fs = std::filesystem;

namespace csan {

namespace {

constexpr const char* kTempMarker = ".tmp.";
constexpr const char* kOldMarker = ".old";

// PATH.tmp.PID.N: unique per process and call, so concurrent writers (ranks, workers)
// never collide, and a later run can tell whose leftover it is (remove_stale_temporaries).
std::string temp_name_for(const std::string& path) {
  static std::atomic<unsigned> counter{0};
  return path + kTempMarker + std::to_string(::getpid()) + "." + std::to_string(counter++);
}

// The PID of "PID.N", or -1 when `tail` is not of that form.
long pid_of_temp_tail(const std::string& tail) {
  const size_t dot = tail.find('.');
  if (dot == 0 || dot == std::string::npos || dot + 1 == tail.size() || dot > 9) return -1;
  for (size_t i = 0; i < tail.size(); ++i)
    if (i != dot && (tail[i] < '0' || tail[i] > '9')) return -1;
  return std::stol(tail.substr(0, dot));
}

bool process_is_gone(long pid) { return pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH; }

}  // namespace

AtomicFile::AtomicFile(std::string path, FileWrites writes)
    : path_(std::move(path)), temp_path_(temp_name_for(path_)) {
  register_temporary(temp_path_);
  if (writes == FileWrites::straight_to_disk) {
    try {
      direct_ = std::make_unique<DirectFileWriter>(temp_path_, path_);
    } catch (...) {
      discard_temporary();
      throw;
    }
    return;
  }
  file_ = std::fopen(temp_path_.c_str(), "wb");
  if (!file_) {
    const int error = errno;
    forget_temporary(temp_path_);
    throw Error(path_ + ": cannot write: " + std::strerror(error));
  }
}

AtomicFile::~AtomicFile() {
  if (file_ || direct_) {
    if (file_) std::fclose(file_);
    direct_.reset();
    discard_temporary();
  }
}

void AtomicFile::discard_temporary() const {
  std::remove(temp_path_.c_str());
  forget_temporary(temp_path_);
}

void AtomicFile::write(const void* data, size_t size) {
  if (direct_) return direct_->write(data, size);
  if (size && std::fwrite(data, 1, size, file_) != size) throw Error(path_ + ": write failed: " + std::strerror(errno));
}

void AtomicFile::flush() {
  if (direct_) return direct_->sync();
  if (std::fflush(file_) != 0) throw Error(path_ + ": write failed: " + std::strerror(errno));
}

void AtomicFile::overwrite(size_t offset, const void* data, size_t size) {
  if (direct_) return direct_->overwrite(offset, data, size);
  flush();
  const off_t written = ::ftello(file_);
  if (written < 0 || offset > static_cast<size_t>(written) || size > static_cast<size_t>(written) - offset)
    throw Error("internal: " + path_ + ": overwrite past what was written");
  const auto* bytes = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t done = ::pwrite(::fileno(file_), bytes, size, static_cast<off_t>(offset));
    if (done < 0 && errno == EINTR) continue;
    if (done <= 0) throw Error(path_ + ": write failed: " + std::strerror(done < 0 ? errno : EIO));
    bytes += done;
    offset += static_cast<size_t>(done);
    size -= static_cast<size_t>(done);
  }
}

void AtomicFile::commit() {
  if (direct_) {
    try {
      direct_->sync();
    } catch (...) {
      direct_.reset();
      discard_temporary();
      throw;
    }
    direct_.reset();
  } else {
    bool ok = std::fflush(file_) == 0 && ::fsync(::fileno(file_)) == 0;
    ok = (std::fclose(file_) == 0) && ok;
    const int error = errno;
    file_ = nullptr;
    if (!ok) {
      discard_temporary();
      throw Error(path_ + ": write failed: " + std::strerror(error));
    }
  }
  auto held = hold_temporaries();
  forget_temporary(temp_path_);
  if (std::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    const int rename_error = errno;
    std::remove(temp_path_.c_str());
    throw Error(path_ + ": cannot rename into place: " + std::strerror(rename_error));
  }
}

void write_file_atomically(const std::string& path, std::string_view contents) {
  AtomicFile f(path);
  f.write(contents);
  f.commit();
}

AtomicDirectory::AtomicDirectory(std::string path) : path_(std::move(path)) {
  fs::path p(path_);
  std::error_code ec;
  if (p.has_parent_path()) fs::create_directories(p.parent_path(), ec);
  if (ec) throw Error(p.parent_path().string() + ": cannot create directory: " + ec.message());
  staging_ = temp_name_for(path_);
  register_temporary(staging_);
  fs::create_directories(staging_, ec);
  if (ec) {
    forget_temporary(staging_);
    throw Error(path_ + ": cannot create directory: " + ec.message());
  }
}

AtomicDirectory::~AtomicDirectory() {
  if (!committed_) {
    std::error_code ec;
    remove_tree(staging_);
    forget_temporary(staging_);
  }
}

void AtomicDirectory::commit() {
  std::error_code ec;
  std::string old;
  {
    // An interrupt waits until the new directory is in place (or the old one is back).
    auto held = hold_temporaries();
    if (fs::exists(path_, ec)) {
      // Move the old directory aside first so that a failure never loses both copies.
      old = temp_name_for(path_ + kOldMarker);
      fs::rename(path_, old, ec);
      if (ec) throw Error(path_ + ": cannot replace: " + ec.message());
      register_temporary(old);
    }
    fs::rename(staging_, path_, ec);
    if (ec) {
      if (!old.empty()) {
        std::error_code restore_ec;
        fs::rename(old, path_, restore_ec);
        forget_temporary(old);
      }
      throw Error(path_ + ": cannot rename into place: " + ec.message());
    }
    committed_ = true;
    forget_temporary(staging_);
  }
  if (!old.empty()) {
    remove_tree(old);
    forget_temporary(old);
  }
}

std::vector<std::string> remove_stale_temporaries(const std::string& path) {
  std::vector<std::string> removed;
  const fs::path target(path);
  const fs::path parent = target.has_parent_path() ? target.parent_path() : fs::path(".");
  const std::string name = target.filename().string();
  if (name.empty()) return removed;
  const std::string temp_prefix = name + kTempMarker;
  const std::string old_prefix = name + kOldMarker + kTempMarker;
  std::error_code ec;
  fs::directory_iterator it(parent, ec), end;
  std::vector<std::pair<fs::path, bool>> stale;  // (path, is an old copy moved aside)
  for (; !ec && it != end; it.increment(ec)) {
    const std::string entry = it->path().filename().string();
    for (bool old : {false, true}) {
      const std::string& prefix = old ? old_prefix : temp_prefix;
      if (entry.rfind(prefix, 0) == 0 && process_is_gone(pid_of_temp_tail(entry.substr(prefix.size()))))
        stale.emplace_back(target.has_parent_path() ? it->path() : fs::path(entry), old);
    }
  }
  for (const auto& [leftover, old] : stale) {
    // An old copy moved aside by a commit that died before the new one was in place is
    // the only copy left: put it back rather than delete it.
    if (old && !fs::exists(target, ec)) {
      fs::rename(leftover, target, ec);
      if (!ec) {
        removed.push_back(leftover.string() + " (restored as " + path + ")");
        continue;
      }
    }
    if (remove_tree(leftover.string())) removed.push_back(leftover.string());
  }
  return removed;
}

std::string read_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int error = errno;
    throw Error(path + ": cannot open: " + std::strerror(error),
                error == ENOENT ? ErrorKind::missing_file : ErrorKind::general);
  }
  // A directory opens fine and then fails every read; std::ifstream reads it as empty.
  struct stat st {};
  const bool known = ::fstat(fd, &st) == 0;
  if (known && S_ISDIR(st.st_mode)) {
    ::close(fd);
    throw Error(path + ": is a directory, expected a file");
  }
  std::string data;
  if (known && S_ISREG(st.st_mode)) data.reserve(static_cast<size_t>(st.st_size));
  char buffer[1 << 16];
  while (true) {
    const ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got == 0) break;
    if (got < 0) {
      if (errno == EINTR) continue;
      const int error = errno;
      ::close(fd);
      throw Error(path + ": read failed: " + std::strerror(error));
    }
    data.append(buffer, static_cast<size_t>(got));
  }
  ::close(fd);
  return data;
}

}  // namespace csan
