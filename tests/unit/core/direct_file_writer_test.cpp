#include "toolkit/core/direct_file_writer.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "toolkit/core/atomic_file.h"
#include "toolkit/core/error.h"

namespace fs = std::filesystem;
using csan::DirectFileWriter;

namespace {

// A folder of its own for each test, removed after it (the files are tens of MiB).
class DirectFileWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / ("csan_direct_writer_" + std::string(test->name()) + "_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

// Bytes that differ from block to block and buffer to buffer, so that a block written at
// the wrong offset, or twice, shows.
std::string pattern_bytes(size_t n) {
  std::string s(n, '\0');
  uint64_t x = 0x9E3779B97F4A7C15ull;
  for (size_t i = 0; i < n; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    s[i] = static_cast<char>(x);
  }
  return s;
}

constexpr size_t kMiB = size_t{1} << 20;

TEST_F(DirectFileWriterTest, BytesInUnevenPiecesArriveWholeAcrossBuffers) {
  const fs::path path = dir_ / "f.bin";
  const std::string bytes = pattern_bytes(2 * DirectFileWriter::kBufferBytes + 3 * kMiB + 12345);
  {
    DirectFileWriter w(path.string(), "f.bin");
    // Pieces that end inside a block, exactly on a buffer's end, and span two buffers.
    const size_t pieces[] = {1, 4095, 4097, DirectFileWriter::kBufferBytes - 8193, DirectFileWriter::kBufferBytes + 3,
                             123457};
    size_t at = 0;
    for (size_t i = 0; at < bytes.size(); ++i) {
      const size_t n = std::min(pieces[i % std::size(pieces)], bytes.size() - at);
      w.write(bytes.data() + at, n);
      at += n;
    }
    EXPECT_EQ(w.size(), bytes.size());
    w.sync();
  }
  EXPECT_EQ(fs::file_size(path), bytes.size());
  EXPECT_TRUE(csan::read_file(path.string()) == bytes);
}

TEST_F(DirectFileWriterTest, OverwriteReachesBytesOnDiskAndInTheBuffer) {
  const fs::path path = dir_ / "f.bin";
  std::string expected = pattern_bytes(DirectFileWriter::kBufferBytes + kMiB + 100);
  DirectFileWriter w(path.string(), "f.bin");
  w.write(expected.data(), expected.size());  // the first buffer is on its way to the disk
  const auto patch = [&](size_t offset, const std::string& text) {
    w.overwrite(offset, text.data(), text.size());
    expected.replace(offset, text.size(), text);
  };
  patch(10, "first block");
  patch(4090, "across blocks");                                     // 4090..4102
  patch(DirectFileWriter::kBufferBytes - 4, "file|buffer");         // half written, half not
  patch(DirectFileWriter::kBufferBytes + 50, "still in the buffer");
  patch(expected.size() - 3, "end");
  w.sync();
  EXPECT_TRUE(csan::read_file(path.string()) == expected);
  EXPECT_THROW(w.overwrite(expected.size() - 2, "xyz", 3), csan::Error);
  EXPECT_THROW(w.overwrite(expected.size() + 1, "", 0), csan::Error);
}

TEST_F(DirectFileWriterTest, SyncLeavesTheExactLengthAndWritingGoesOn) {
  const fs::path path = dir_ / "f.bin";
  std::string expected = pattern_bytes(5000);
  DirectFileWriter w(path.string(), "f.bin");
  w.write(expected.data(), expected.size());
  w.sync();
  EXPECT_EQ(fs::file_size(path), 5000u);
  EXPECT_TRUE(csan::read_file(path.string()) == expected);
  // The padded last block is written again with what follows.
  w.write("0123456789", 10);
  w.overwrite(4998, "ABCD", 4);
  expected += "0123456789";
  expected.replace(4998, 4, "ABCD");
  w.sync();
  EXPECT_EQ(fs::file_size(path), 5010u);
  EXPECT_TRUE(csan::read_file(path.string()) == expected);
}

TEST_F(DirectFileWriterTest, ThePageCacheCarriesTheSameBytesWhereODirectIsRefused) {
  const fs::path path = dir_ / "f.bin";
  const std::string bytes = pattern_bytes(DirectFileWriter::kBufferBytes + 777);
  {
    DirectFileWriter w(path.string(), "f.bin", /*try_direct=*/false);
    EXPECT_FALSE(w.direct());
    w.write(bytes.data(), bytes.size());
    w.overwrite(3, "xy", 2);
    w.sync();
  }
  std::string expected = bytes;
  expected.replace(3, 2, "xy");
  EXPECT_TRUE(csan::read_file(path.string()) == expected);
}

// A disk that fills up (here: a file size limit, which fails writes as a full disk does)
// is one error naming the file; an atomic write then leaves the old file and no temporary.
TEST_F(DirectFileWriterTest, AFailedWriteNamesTheFileAndAnAtomicWriteKeepsTheOldFile) {
  const std::string path = (dir_ / "model.pt").string();
  csan::write_file_atomically(path, "old");
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::signal(SIGXFSZ, SIG_IGN);  // the write then fails with EFBIG instead of killing
    const rlimit limit{3 * kMiB, 3 * kMiB};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    const std::string bytes = pattern_bytes(2 * DirectFileWriter::kBufferBytes);
    std::string message;
    try {
      csan::AtomicFile f(path, csan::FileWrites::straight_to_disk);
      f.write(bytes.data(), bytes.size());
      f.commit();
    } catch (const csan::Error& e) {
      message = e.what();
    }
    const bool named = message.rfind(path + ": write failed: ", 0) == 0;
    const bool kept = csan::read_file(path) == "old" &&
                      std::distance(fs::directory_iterator(dir_), fs::directory_iterator{}) == 1;
    ::_exit(named && kept ? 0 : (named ? 2 : 1));
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: no error naming the file, 2: the old file or no leftover not kept";
}

}  // namespace
