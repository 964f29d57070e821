#include "toolkit/core/atomic_file.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "toolkit/core/error.h"

namespace fs = std::filesystem;

namespace csan {

namespace {
// Unique per process and call, so concurrent writers (ranks, workers) never collide.
std::string temp_name_for(const std::string& path) {
  static std::atomic<unsigned> counter{0};
  return path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
}
}  // namespace

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)), temp_path_(temp_name_for(path_)) {
  file_ = std::fopen(temp_path_.c_str(), "wb");
  if (!file_) throw Error(path_ + ": cannot write: " + std::strerror(errno));
}

AtomicFile::~AtomicFile() {
  if (file_) {
    std::fclose(file_);
    std::remove(temp_path_.c_str());
  }
}

void AtomicFile::write(const void* data, size_t size) {
  if (size && std::fwrite(data, 1, size, file_) != size)
    throw Error(path_ + ": write failed: " + std::strerror(errno));
}

void AtomicFile::commit() {
  bool ok = std::fflush(file_) == 0 && ::fsync(::fileno(file_)) == 0;
  ok = (std::fclose(file_) == 0) && ok;
  file_ = nullptr;
  if (!ok) {
    std::remove(temp_path_.c_str());
    throw Error(path_ + ": write failed: " + std::strerror(errno));
  }
  if (std::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    std::remove(temp_path_.c_str());
    throw Error(path_ + ": cannot rename into place: " + std::strerror(errno));
  }
}

void write_file_atomically(const std::string& path, std::string_view contents) {
  AtomicFile f(path);
  f.write(contents);
  f.commit();
}

AtomicDirectory::AtomicDirectory(std::string path) : path_(std::move(path)) {
  fs::path p(path_);
  if (p.has_parent_path()) fs::create_directories(p.parent_path());
  staging_ = temp_name_for(path_);
  std::error_code ec;
  fs::create_directories(staging_, ec);
  if (ec) throw Error(path_ + ": cannot create directory: " + ec.message());
}

AtomicDirectory::~AtomicDirectory() {
  if (!committed_) {
    std::error_code ec;
    fs::remove_all(staging_, ec);
  }
}

void AtomicDirectory::commit() {
  std::error_code ec;
  std::string old;
  if (fs::exists(path_)) {
    // Move the old directory aside first so that a failure never loses both copies.
    old = temp_name_for(path_ + ".old");
    fs::rename(path_, old, ec);
    if (ec) throw Error(path_ + ": cannot replace: " + ec.message());
  }
  fs::rename(staging_, path_, ec);
  if (ec) {
    if (!old.empty()) fs::rename(old, path_);
    throw Error(path_ + ": cannot rename into place: " + ec.message());
  }
  committed_ = true;
  if (!old.empty()) fs::remove_all(old, ec);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open: " + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw Error(path + ": read failed");
  return ss.str();
}

}  // namespace csan
