// release_clean_library_pages: what it drops from the resident set (clean pages of read-only
// shared-object mappings) and what it must never touch (a read-only mapping holding pages
// the process wrote, as relocated data is; other files' maps, such as mapped weights).
#include "toolkit/core/process_memory.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/support/resident_memory.h"

namespace fs = std::filesystem;

namespace {

fs::path process_memory_scratch(const std::string& name) {
  return csan::testing::process_scratch("process-memory", name);
}
using csan::testing::resident_kib_of;

// A file of `size` bytes (byte i = i * 7 + i / 4096), mapped privately, every page read.
struct MappedPattern {
  char* data = nullptr;
  size_t size = 0;
  MappedPattern(const fs::path& path, size_t bytes, int protection) : size(bytes) {
    std::string content(bytes, '\0');
    for (size_t i = 0; i < bytes; ++i) content[i] = static_cast<char>(i * 7 + i / 4096);
    std::ofstream(path, std::ios::binary).write(content.data(), static_cast<std::streamsize>(bytes));
    std::FILE* f = std::fopen(path.c_str(), "r");
    ::fsync(::fileno(f));  // pages still to be written back count as dirty, as a library's never are
    void* p = ::mmap(nullptr, bytes, protection, MAP_PRIVATE, ::fileno(f), 0);
    std::fclose(f);
    if (p != MAP_FAILED) data = static_cast<char*>(p);
  }
  ~MappedPattern() {
    if (data) ::munmap(data, size);
  }
  long sum() const {
    long s = 0;
    for (size_t i = 0; i < size; ++i) s += static_cast<unsigned char>(data[i]);
    return s;
  }
  long expected_sum() const {
    long s = 0;
    for (size_t i = 0; i < size; ++i) s += static_cast<unsigned char>(static_cast<char>(i * 7 + i / 4096));
    return s;
  }
};

TEST(ProcessMemory, CleanSharedObjectPagesLeaveTheResidentSetAndWrittenOnesStay) {
  // Code or read-only data of a library: read, never written.
  MappedPattern code(process_memory_scratch("libclean.so.1"), 4 << 20, PROT_READ);
  // Relocated data: written after mapping, then made read-only, as ld.so does with RELRO.
  MappedPattern relocated(process_memory_scratch("librelocated.so"), 2 * 4096, PROT_READ | PROT_WRITE);
  // Not a shared object (mapped weights): left alone whatever it holds.
  MappedPattern weights(process_memory_scratch("weights.bin"), 1 << 20, PROT_READ);
  ASSERT_TRUE(code.data && relocated.data && weights.data);
  relocated.data[10] = 'b';
  ASSERT_EQ(::mprotect(relocated.data, relocated.size, PROT_READ), 0);
  EXPECT_EQ(code.sum(), code.expected_sum());
  EXPECT_EQ(weights.sum(), weights.expected_sum());
  ASSERT_GE(resident_kib_of(code.data), 4000);
  const long relocated_resident = resident_kib_of(relocated.data);
  const long weights_resident = resident_kib_of(weights.data);

  EXPECT_GE(csan::core::release_clean_library_pages(), 4000);
  EXPECT_EQ(resident_kib_of(code.data), 0);
  EXPECT_EQ(resident_kib_of(relocated.data), relocated_resident);
  EXPECT_EQ(resident_kib_of(weights.data), weights_resident);
  // What was dropped reads back from the file; what the process wrote is still its own.
  EXPECT_EQ(code.sum(), code.expected_sum());
  EXPECT_EQ(relocated.data[10], 'b');
  EXPECT_EQ(relocated.data[4096], static_cast<char>(4096 * 7 + 1));
  fs::remove_all(process_memory_scratch("").parent_path());
}

}  // namespace
