// Writes a large file front to back straight to the disk (O_DIRECT), for checkpoints.
//
// Why: written through the page cache, an 800 MB checkpoint costs the kernel a copy into
// 200,000 cache pages, their dirty accounting and the filesystem's per-page bookkeeping,
// and then fsync waits for all of it to reach the disk: on these machines 0.2-2 s of
// system time for 800 MB, varying with whatever else is dirty. Handed to the disk in
// 8 MiB aligned blocks, the same bytes take 0.06 s of system time, and a background
// thread writes one block while the caller fills the next, so that the disk's time hides
// behind the caller's (csan-import reading the model it converts). Measured in
// tools/experiments/results/import-time-2026-11-29.md ("Writing straight to the disk").
//
// Where the filesystem refuses O_DIRECT (tmpfs, some network filesystems), the same
// blocks go through the page cache: the bytes written are identical either way.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace csan {

class DirectFileWriter {
 public:
  // Creates (or truncates) `path`; `name` is what errors call it. Throws csan::Error.
  // try_direct false: the page cache from the start (what a filesystem that refuses
  // O_DIRECT gets; for tests).
  DirectFileWriter(const std::string& path, std::string name, bool try_direct = true);
  ~DirectFileWriter();  // stops the writing thread and closes the file (it stays as far as written)
  DirectFileWriter(const DirectFileWriter&) = delete;
  DirectFileWriter& operator=(const DirectFileWriter&) = delete;

  void write(const void* data, size_t size);
  // Replaces `size` bytes at `offset` of what was written so far. Throws csan::Error when
  // the range is not inside what was written.
  void overwrite(size_t offset, const void* data, size_t size);
  // Everything written so far is in the file (its length exactly what was written) and on
  // the disk (fsync). Writing may go on afterwards. Throws csan::Error.
  void sync();

  size_t size() const { return written_; }
  // Whether the disk takes the blocks directly (false: the filesystem refused O_DIRECT).
  bool direct() const { return direct_.load(); }

  // The alignment of O_DIRECT's buffers, offsets and lengths used here (a page: what
  // every Linux filesystem that supports O_DIRECT accepts) and the staging buffers' size.
  static constexpr size_t kAlignment = 4096;
  static constexpr size_t kBufferBytes = size_t{8} << 20;

 private:
  struct AlignedFree {
    void operator()(char* p) const;
  };
  using Buffer = std::unique_ptr<char, AlignedFree>;

  // Writes `length` bytes of `data` at `offset` (all multiples of kAlignment unless
  // padded by the caller), switching to the page cache if O_DIRECT is refused.
  // Returns 0 or the errno of the failure.
  int write_at(const char* data, size_t length, size_t offset);
  // Hands the filled buffer to the writing thread and takes the other one.
  void submit_full_buffer();
  void wait_for_writer();  // until the thread is idle; throws its error, if any
  void writer_loop();
  [[noreturn]] void fail(int error) const;

  std::string name_;
  int fd_ = -1;
  std::atomic<bool> direct_{false};  // the writing thread may turn it off
  Buffer buffers_[2];
  int filling_ = 0;           // the buffer the caller's bytes go to
  size_t fill_ = 0;           // bytes in it
  size_t buffer_offset_ = 0;  // where in the file it starts (a multiple of kAlignment)
  size_t written_ = 0;        // bytes given to write()

  // The writing thread's one job at a time.
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable changed_;
  bool job_ = false, stop_ = false;
  const char* job_data_ = nullptr;
  size_t job_length_ = 0, job_offset_ = 0;
  int job_error_ = 0;
};

}  // namespace csan
