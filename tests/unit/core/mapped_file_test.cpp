#include "toolkit/core/mapped_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/support/error_message.h"
#include "tests/support/resident_memory.h"

namespace fs = std::filesystem;

namespace {

using csan::testing::message_of;

fs::path scratch(const std::string& name) { return csan::testing::process_scratch("mapped-file", name); }
using csan::testing::resident_kib_of;

long sum_of(const csan::core::MappedFile& file) {
  long sum = 0;
  for (size_t i = 0; i < file.size(); ++i) sum += static_cast<unsigned char>(file.data()[i]);
  return sum;
}

TEST(MappedFile, ReleasedPagesLeaveTheResidentSetAndReadTheSameAfterwards) {
  const auto path = scratch("four-mib.bin");
  std::string bytes(4 << 20, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 7 + i / 4096);
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  const csan::core::MappedFile file(path.string());
  ASSERT_EQ(file.size(), bytes.size());
  const long sum = sum_of(file);
  EXPECT_GE(resident_kib_of(file.data()), 4000) << "all pages were read";
  // Part of it: at least that part goes (the kernel may drop a whole large folio).
  file.release(4096 + 100, 2 << 20);
  EXPECT_LT(resident_kib_of(file.data()), 4096 - 2000);
  EXPECT_EQ(sum_of(file), sum);
  file.release(0, file.size());
  EXPECT_LT(resident_kib_of(file.data()), 64);
  EXPECT_EQ(std::string(file.data(), file.size()), bytes);
  EXPECT_EQ(sum_of(file), sum);
}

// A copy-on-write map takes writes as this process's own pages: the file, and another map
// of it, keep the old bytes; release() leaves the written pages alone.
TEST(MappedFile, CopyOnWriteNeverChangesTheFile) {
  const auto path = scratch("copy-on-write.bin");
  const std::string bytes(3 * 4096, 'a');
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  const csan::core::MappedFile own(path.string(), csan::core::MappedFile::Access::copy_on_write);
  own.writable_data()[5000] = 'b';
  own.release(0, own.size());
  EXPECT_EQ(own.data()[5000], 'b');
  EXPECT_EQ(own.data()[4999], 'a');
  const csan::core::MappedFile other(path.string());
  EXPECT_EQ(std::string(other.data(), other.size()), bytes);
  std::ifstream in(path, std::ios::binary);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), bytes);
}

TEST(MappedFile, MissingFileDirectoryAndEmptyFile) {
  const auto missing = scratch("absent.bin");
  EXPECT_EQ(message_of([&] { csan::core::MappedFile f(missing.string()); }),
            missing.string() + ": cannot open: No such file or directory");
  const auto dir = scratch("a-directory");
  fs::create_directories(dir);
  EXPECT_EQ(message_of([&] { csan::core::MappedFile f(dir.string()); }),
            dir.string() + ": is a directory, expected a file");
  const auto empty = scratch("empty.bin");
  std::ofstream(empty).close();
  const csan::core::MappedFile file(empty.string());
  EXPECT_EQ(file.size(), 0u);
  EXPECT_EQ(file.data(), nullptr);
  file.release(0, 10);  // nothing to release
}

}  // namespace
