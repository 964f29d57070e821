#include "toolkit/core/direct_file_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "toolkit/core/error.h"

namespace csan {

namespace {

#ifdef O_DIRECT
constexpr int kDirectFlag = O_DIRECT;
#else
constexpr int kDirectFlag = 0;  // no such thing here: every block goes through the page cache
#endif

size_t round_up(size_t n, size_t alignment) { return (n + alignment - 1) / alignment * alignment; }

char* aligned_buffer(size_t bytes) {
  void* p = std::aligned_alloc(DirectFileWriter::kAlignment, bytes);
  if (!p) throw std::bad_alloc();
  return static_cast<char*>(p);
}

}  // namespace

void DirectFileWriter::AlignedFree::operator()(char* p) const { std::free(p); }

DirectFileWriter::DirectFileWriter(const std::string& path, std::string name, bool try_direct)
    : name_(std::move(name)) {
  const int flags = O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC;  // read: overwrite()'s blocks
  fd_ = kDirectFlag && try_direct ? ::open(path.c_str(), flags | kDirectFlag, 0666) : -1;
  direct_ = fd_ >= 0;
  if (fd_ < 0) fd_ = ::open(path.c_str(), flags, 0666);  // EINVAL: O_DIRECT refused (tmpfs)
  if (fd_ < 0) {
    const int error = errno;
    throw Error(name_ + ": cannot write: " + std::strerror(error));
  }
  buffers_[0].reset(aligned_buffer(kBufferBytes));
  buffers_[1].reset(aligned_buffer(kBufferBytes));
}

DirectFileWriter::~DirectFileWriter() {
  if (thread_.joinable()) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    changed_.notify_all();
    thread_.join();
  }
  ::close(fd_);
}

void DirectFileWriter::fail(int error) const { throw Error(name_ + ": write failed: " + std::strerror(error)); }

int DirectFileWriter::write_at(const char* data, size_t length, size_t offset) {
  while (length > 0) {
    const ssize_t done = ::pwrite(fd_, data, length, static_cast<off_t>(offset));
    if (done < 0 && errno == EINTR) continue;
    if (done < 0 && errno == EINVAL && direct_.load()) {
      // The filesystem opened the file for O_DIRECT but refuses these blocks (an
      // alignment larger than a page): the page cache takes them instead.
      const int flags = ::fcntl(fd_, F_GETFL);
      if (flags < 0 || ::fcntl(fd_, F_SETFL, flags & ~kDirectFlag) < 0) return errno;
      direct_ = false;
      continue;
    }
    if (done <= 0) return done < 0 ? errno : EIO;
    data += done;
    offset += static_cast<size_t>(done);
    length -= static_cast<size_t>(done);
  }
  return 0;
}

void DirectFileWriter::writer_loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    changed_.wait(lock, [&] { return job_ || stop_; });
    if (!job_) return;
    const char* data = job_data_;
    const size_t length = job_length_, offset = job_offset_;
    lock.unlock();
    const int error = write_at(data, length, offset);
    lock.lock();
    if (error && !job_error_) job_error_ = error;
    job_ = false;
    changed_.notify_all();
  }
}

void DirectFileWriter::wait_for_writer() {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return !job_; });
  if (job_error_) fail(job_error_);
}

void DirectFileWriter::submit_full_buffer() {
  wait_for_writer();  // the other buffer's bytes are in the file: it can be refilled
  {
    std::lock_guard<std::mutex> lock(mutex_);
    job_ = true;
    job_data_ = buffers_[filling_].get();
    job_length_ = kBufferBytes;
    job_offset_ = buffer_offset_;
  }
  if (!thread_.joinable()) thread_ = std::thread([this] { writer_loop(); });
  changed_.notify_all();
  filling_ ^= 1;
  buffer_offset_ += kBufferBytes;
  fill_ = 0;
}

void DirectFileWriter::write(const void* data, size_t size) {
  const auto* bytes = static_cast<const char*>(data);
  while (size > 0) {
    const size_t take = std::min(size, kBufferBytes - fill_);
    std::memcpy(buffers_[filling_].get() + fill_, bytes, take);
    fill_ += take;
    written_ += take;
    bytes += take;
    size -= take;
    if (fill_ == kBufferBytes) submit_full_buffer();
  }
}

void DirectFileWriter::overwrite(size_t offset, const void* data, size_t size) {
  if (offset > written_ || size > written_ - offset) throw Error("internal: " + name_ + ": overwrite past what was written");
  const auto* bytes = static_cast<const char*>(data);
  // The part still in the buffer being filled is patched there.
  if (offset + size > buffer_offset_) {
    const size_t from = std::max(offset, buffer_offset_);
    std::memcpy(buffers_[filling_].get() + (from - buffer_offset_), bytes + (from - offset), offset + size - from);
    size = from - offset;
  }
  if (size == 0) return;
  // The part already in the file: its whole blocks are read, patched and written back.
  wait_for_writer();
  const size_t begin = offset / kAlignment * kAlignment;
  const size_t end = round_up(offset + size, kAlignment);  // <= buffer_offset_, which is aligned
  const Buffer blocks(aligned_buffer(end - begin));
  for (size_t got = 0; got < end - begin;) {
    const ssize_t n = ::pread(fd_, blocks.get() + got, end - begin - got, static_cast<off_t>(begin + got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail(n < 0 ? errno : EIO);
    got += static_cast<size_t>(n);
  }
  std::memcpy(blocks.get() + (offset - begin), bytes, size);
  if (const int error = write_at(blocks.get(), end - begin, begin)) fail(error);
}

void DirectFileWriter::sync() {
  wait_for_writer();
  if (fill_ > 0) {
    // The last partial block goes out padded with zeros and the file is cut back to its
    // length; the bytes stay in the buffer, so that further writes rewrite that block.
    const size_t padded = round_up(fill_, kAlignment);
    std::memset(buffers_[filling_].get() + fill_, 0, padded - fill_);
    if (const int error = write_at(buffers_[filling_].get(), padded, buffer_offset_)) fail(error);
  }
  if (::ftruncate(fd_, static_cast<off_t>(written_)) != 0 || ::fsync(fd_) != 0) fail(errno);
}

}  // namespace csan
