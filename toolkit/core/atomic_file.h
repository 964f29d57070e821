// Writes that never leave a half-written result behind: data goes to a temporary
// sibling, which is renamed over the destination only once it is complete.
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace csan {

class DirectFileWriter;

// How an AtomicFile's bytes reach the disk: through the page cache (stdio), or, for large
// files written front to back such as checkpoints, straight to the disk in large aligned
// blocks while the caller goes on (direct_file_writer.h).
enum class FileWrites { through_page_cache, straight_to_disk };

class AtomicFile {
 public:
  explicit AtomicFile(std::string path, FileWrites writes = FileWrites::through_page_cache);
  ~AtomicFile();  // discards the temporary file unless commit() ran
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(const void* data, size_t size);
  void write(std::string_view text) { write(text.data(), text.size()); }
  // Pushes what was written so far to the temporary file (temp_path()), e.g. to read it
  // back before the last bytes. Throws csan::Error on failure.
  void flush();
  // Replaces `size` bytes at `offset` of what was written so far: a field reserved at the
  // start and known only at the end (a checksum in a file's header). Throws csan::Error on
  // failure, or when the range is not inside what was written.
  void overwrite(size_t offset, const void* data, size_t size);
  // Flushes, fsyncs and renames into place. Throws csan::Error on failure.
  void commit();

  const std::string& path() const { return path_; }
  const std::string& temp_path() const { return temp_path_; }

 private:
  std::string path_;
  std::string temp_path_;
  std::FILE* file_ = nullptr;                 // through_page_cache
  std::unique_ptr<DirectFileWriter> direct_;  // straight_to_disk
  // Removes the temporary file and stops tracking it (a failed or abandoned write).
  void discard_temporary() const;
};

// Whole-file convenience wrapper around AtomicFile.
void write_file_atomically(const std::string& path, std::string_view contents);

// A directory built under a temporary name next to its destination and renamed into
// place by commit(); removed (with its contents) if destroyed before commit().
class AtomicDirectory {
 public:
  explicit AtomicDirectory(std::string path);
  ~AtomicDirectory();
  AtomicDirectory(const AtomicDirectory&) = delete;
  AtomicDirectory& operator=(const AtomicDirectory&) = delete;

  // Where to write the contents while building.
  const std::string& staging() const { return staging_; }
  // Replaces `path` (if it exists) by the staged directory.
  void commit();

 private:
  std::string path_;
  std::string staging_;
  bool committed_ = false;
};

// Removes what interrupted runs left next to `path`: temporaries PATH.tmp.PID.N of
// AtomicFile/AtomicDirectory whose process no longer exists. An old directory that a
// dead commit had moved aside (PATH.old.tmp.PID.N) is renamed back to PATH when PATH is
// missing. Temporaries of live processes are never touched. Returns what it did, one
// entry per path.
std::vector<std::string> remove_stale_temporaries(const std::string& path);

// Reads a whole file; throws csan::Error naming the file if it cannot be read or is a
// directory.
std::string read_file(const std::string& path);

}  // namespace csan
