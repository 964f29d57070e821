#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "toolkit/core/checked_output.h"
#include "toolkit/core/error.h"

namespace {

// run_main's stderr line for a body that throws what `thrower` throws.
struct Outcome {
  int status;
  std::string err;
};

void (*thrower)() = nullptr;

int body(int, char**) {
  thrower();
  return 0;
}

Outcome run_with(void (*f)()) {
  thrower = f;
  testing::internal::CaptureStderr();
  const int status = csan::run_main("prog", body, 0, nullptr);
  return {status, testing::internal::GetCapturedStderr()};
}

// libstdc++ says "filesystem error: cannot create directories: Not a directory [PATH]";
// every other message starts with the path.
TEST(RunMain, FilesystemErrorsStartWithThePath) {
  auto outcome = run_with([] { std::filesystem::create_directories("/dev/null/sub"); });
  EXPECT_EQ(outcome.status, 1);
  EXPECT_EQ(outcome.err, "prog: error: /dev/null/sub: cannot create directories: Not a directory\n");
  outcome = run_with([] { std::filesystem::rename("/nonexistent/a", "/nonexistent/b"); });
  EXPECT_EQ(outcome.err, "prog: error: /nonexistent/a -> /nonexistent/b: cannot rename: No such file or directory\n");
}

TEST(RunMain, ClosedPipeEndsQuietlyWith141) {
  auto outcome = run_with([] { throw csan::OutputClosed("stdout"); });
  EXPECT_EQ(outcome.status, 141);
  EXPECT_EQ(outcome.err, "");
}

TEST(RunMain, OtherErrorsAreOneLine) {
  auto outcome = run_with([] { throw csan::Error("a.txt:3: bad\nthing"); });
  EXPECT_EQ(outcome.status, 1);
  EXPECT_EQ(outcome.err, "prog: error: a.txt:3: bad thing\n");
}

// A misspelt kernel switch (core/kernel_switches.h) stops every program before it starts.
TEST(RunMain, AMisspeltKernelSwitchIsAnErrorBeforeTheBodyRuns) {
  ::setenv("CSAN_SGEMM", "onedn", 1);
  bool ran = false;
  static bool* ran_flag = &ran;
  auto outcome = run_with([] { *ran_flag = true; });
  ::unsetenv("CSAN_SGEMM");
  EXPECT_FALSE(ran);
  EXPECT_EQ(outcome.status, 1);
  EXPECT_EQ(outcome.err, "prog: error: environment variable CSAN_SGEMM: 'onedn' is not one of onednn, libtorch\n");
}

}  // namespace
