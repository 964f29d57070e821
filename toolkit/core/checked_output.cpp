#include "toolkit/core/checked_output.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <streambuf>
#include <vector>

namespace csan {

// A streambuf over a descriptor that throws instead of returning the failure to an
// ostream that would only record it in badbit.
class CheckedOutput::Buffer : public std::streambuf {
 public:
  Buffer(int fd, std::string name) : fd_(fd), name_(std::move(name)), storage_(1 << 16) {
    setp(storage_.data(), storage_.data() + storage_.size());
  }

  void flush_buffer() {
    const char* data = pbase();
    size_t left = static_cast<size_t>(pptr() - pbase());
    // Reset first: after a failure the bytes are not retried, so a destructor's final
    // flush does not write them a second time.
    setp(storage_.data(), storage_.data() + storage_.size());
    write_all(data, left);
  }

  void close_descriptor() {
    flush_buffer();
    if (fd_ < 0) return;
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0 && errno != EINTR) fail(errno);
  }

  bool closed() const { return fd_ < 0; }

 protected:
  int_type overflow(int_type c) override {
    flush_buffer();
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(c);
      pbump(1);
    }
    return traits_type::not_eof(c);
  }

  std::streamsize xsputn(const char* s, std::streamsize n) override {
    // Large pieces go straight to the descriptor instead of through the buffer.
    if (n >= epptr() - pptr()) {
      flush_buffer();
      write_all(s, static_cast<size_t>(n));
      return n;
    }
    std::memcpy(pptr(), s, static_cast<size_t>(n));
    pbump(static_cast<int>(n));
    return n;
  }

  int sync() override {
    flush_buffer();
    return 0;
  }

 private:
  void write_all(const char* data, size_t size) {
    if (size > 0 && fd_ < 0) fail(EBADF);
    while (size > 0) {
      const ssize_t written = ::write(fd_, data, size);
      if (written < 0) {
        if (errno == EINTR) continue;
        fail(errno);
      }
      data += written;
      size -= static_cast<size_t>(written);
    }
  }

  [[noreturn]] void fail(int error) const {
    if (error == EPIPE) throw OutputClosed(name_);
    throw Error(name_ + ": write failed: " + std::strerror(error));
  }

  int fd_;
  std::string name_;
  std::vector<char> storage_;
};

CheckedOutput::CheckedOutput(int fd, std::string name)
    : buffer_(std::make_unique<Buffer>(fd, std::move(name))), stream_(buffer_.get()) {
  // Let the Buffer's exception leave the << that met it (an ostream would otherwise
  // swallow it into badbit).
  stream_.exceptions(std::ios::badbit);
}

CheckedOutput::~CheckedOutput() {
  if (buffer_->closed()) return;
  try {
    buffer_->flush_buffer();
  } catch (const std::exception&) {
  }
}

void CheckedOutput::close() { buffer_->close_descriptor(); }

}  // namespace csan
