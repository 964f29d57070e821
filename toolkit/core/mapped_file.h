// A read-only memory map of a whole file. Reading a large file through a map instead of
// into a string keeps its bytes out of the heap: the pages belong to the page cache and
// leave this process's resident set when released (or unmapped). A file truncated in
// place by another process while mapped faults (SIGBUS) past its new end; csan's own
// writers replace files by rename (core/atomic_file), which leaves a mapped file whole.
#pragma once

#include <cstddef>
#include <string>

namespace csan::core {

class MappedFile {
 public:
  // read_only: a write through data() faults. copy_on_write: the pages may be written; a
  // written page becomes this process's own copy and the file never changes (for tensors
  // handed to code that may modify them in place).
  enum class Access { read_only, copy_on_write };
  // Throws csan::Error naming the file when it is missing, a directory or cannot be
  // mapped. An empty file maps to nothing (data() is null, size() 0).
  explicit MappedFile(const std::string& path, Access access = Access::read_only);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const char* data() const { return data_; }
  // Writable only with Access::copy_on_write.
  char* writable_data() const { return const_cast<char*>(data_); }
  size_t size() const { return size_; }
  // Drops (at least) the whole pages inside [offset, offset + length) from the resident
  // set; a later read maps them again from the page cache. The bytes do not change. Does
  // nothing to a copy-on-write mapping (its written pages would be lost).
  void release(size_t offset, size_t length) const;

 private:
  Access access_ = Access::read_only;
  const char* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace csan::core
