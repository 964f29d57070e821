// Standard output whose every write is checked. A result printed to a full disk,
// /dev/full or a closed descriptor must end the program with an error, never with exit
// status 0 and a silently truncated file; std::cout only sets a flag nobody reads.
#pragma once

#include <memory>
#include <ostream>
#include <string>

#include "toolkit/core/error.h"

namespace csan {

// Thrown when the reader of a pipe has gone away (EPIPE, e.g. `| head -1`). Like cat or
// grep, a program then stops quietly: run_main() exits with kClosedPipeExitCode and
// prints nothing.
class OutputClosed : public Error {
 public:
  explicit OutputClosed(const std::string& name) : Error(name + ": the reader closed the pipe") {}
};

// 128 + SIGPIPE: the status a shell shows for `cat big | head -1`'s cat.
inline constexpr int kClosedPipeExitCode = 141;

class CheckedOutput {
 public:
  // Writes to descriptor `fd` (1 = stdout); `name` is how errors call it.
  explicit CheckedOutput(int fd = 1, std::string name = "stdout");
  // Flushes what is buffered, ignoring errors (after an exception nobody can report them).
  ~CheckedOutput();
  CheckedOutput(const CheckedOutput&) = delete;
  CheckedOutput& operator=(const CheckedOutput&) = delete;

  // The stream to print to. A failed write throws csan::Error ("stdout: write failed:
  // No space left on device") or OutputClosed out of the << that hit it.
  std::ostream& stream() { return stream_; }
  // Flushes and closes the descriptor: close() is where some file systems (NFS) report
  // a failed write. Throws like a write. Call it once all output is written.
  void close();

 private:
  class Buffer;
  std::unique_ptr<Buffer> buffer_;
  std::ostream stream_;
};

}  // namespace csan
