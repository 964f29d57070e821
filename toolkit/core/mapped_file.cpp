#include "toolkit/core/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "toolkit/core/error.h"

namespace csan::core {

MappedFile::MappedFile(const std::string& path, Access access) : access_(access) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(path + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    throw Error(path + ": cannot stat: " + std::strerror(err));
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    throw Error(path + ": is a directory, expected a file");
  }
  size_ = static_cast<size_t>(st.st_size);
  if (size_ > 0) {
    void* p = access == Access::read_only ? ::mmap(nullptr, size_, PROT_READ, MAP_SHARED, fd, 0)
                                          : ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      throw Error(path + ": cannot map: " + std::strerror(err));
    }
    data_ = static_cast<const char*>(p);
  }
  ::close(fd);  // the mapping keeps the file
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(const_cast<char*>(data_), size_);
}

void MappedFile::release(size_t offset, size_t length) const {
  if (!data_ || offset >= size_ || access_ != Access::read_only) return;
  length = std::min(length, size_ - offset);
  static const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const auto base = reinterpret_cast<uintptr_t>(data_);  // page-aligned (mmap)
  const size_t first = (offset + page - 1) / page * page;
  const size_t end = offset + length == size_ ? size_ : (offset + length) / page * page;
  if (end <= first) return;
  // A shared read-only file mapping: DONTNEED only unmaps the pages from this process.
  ::madvise(reinterpret_cast<void*>(base + first), end - first, MADV_DONTNEED);
}

}  // namespace csan::core
