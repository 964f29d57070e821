#include "toolkit/core/checked_output.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "toolkit/core/atomic_file.h"

namespace fs = std::filesystem;

namespace {

std::string temp_path(const std::string& name) {
  return (fs::temp_directory_path() / ("csan_core_checked_" + name + "_" + std::to_string(::getpid()))).string();
}

template <typename F>
std::string error_of(F f) {
  try {
    f();
  } catch (const csan::Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(CheckedOutput, WritesEverythingToTheDescriptor) {
  const std::string path = temp_path("ok");
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  const std::string big(300000, 'x');  // larger than the buffer: written around it
  {
    csan::CheckedOutput out(fd, "out");
    out.stream() << "first line\n" << big << "\n" << 42 << "\n";
    out.close();
  }
  EXPECT_EQ(csan::read_file(path), "first line\n" + big + "\n42\n");
  fs::remove(path);
}

// /dev/full accepts open() and fails every write with ENOSPC, like a full disk.
TEST(CheckedOutput, FullDeviceIsAnErrorAtTheWriteOrAtClose) {
  const int small_fd = ::open("/dev/full", O_WRONLY);
  ASSERT_GE(small_fd, 0);
  csan::CheckedOutput small(small_fd);
  small.stream() << "fits in the buffer\n";  // nothing written yet
  EXPECT_EQ(error_of([&] { small.close(); }), "stdout: write failed: No space left on device");

  const int big_fd = ::open("/dev/full", O_WRONLY);
  csan::CheckedOutput big(big_fd);
  EXPECT_EQ(error_of([&] { big.stream() << std::string(1 << 20, 'x'); }),
            "stdout: write failed: No space left on device");
}

TEST(CheckedOutput, ClosedDescriptorIsAnError) {
  csan::CheckedOutput out(-1);
  out.stream() << "x";
  EXPECT_EQ(error_of([&] { out.close(); }), "stdout: write failed: Bad file descriptor");
}

// A reader that went away: OutputClosed (run_main exits quietly with 141), not an error
// message. SIGPIPE is ignored here as a parent process may have left it.
TEST(CheckedOutput, ClosedPipeThrowsOutputClosed) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ::close(fds[0]);
  auto previous = ::signal(SIGPIPE, SIG_IGN);
  csan::CheckedOutput out(fds[1]);
  out.stream() << "lost";
  EXPECT_THROW(out.close(), csan::OutputClosed);
  ::signal(SIGPIPE, previous);
}

}  // namespace
