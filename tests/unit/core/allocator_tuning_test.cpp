#include "toolkit/core/allocator_tuning.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace {

// Keeps the compiler from eliding the malloc/free pair of the test.
void* volatile sink = nullptr;

TEST(AllocatorTuning, LargeBlockComesFromTheHeapAndStaysThereAfterFree) {
#if !defined(__GLIBC__)
  GTEST_SKIP() << "glibc only";
#elif defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer replaces glibc's malloc: mallopt has nothing to tune";
#else
  ASSERT_TRUE(csan::core::keep_large_allocations_mapped());
  constexpr size_t big = size_t{64} << 20;  // above glibc's largest mmap threshold (32 MiB)
  const auto before = mallinfo2();
  sink = std::malloc(big);
  ASSERT_NE(sink, nullptr);
  std::memset(sink, 1, big);
  const auto during = mallinfo2();
  // glibc's default serves this block with its own mmap and unmaps it on free, so the
  // next step of training page-faults all of it in again.
  EXPECT_EQ(during.hblks, before.hblks) << "the block got its own mapping";
  std::free(sink);
  const auto after = mallinfo2();
  EXPECT_GE(after.fordblks, big) << "the freed block went back to the kernel";
  EXPECT_GE(after.arena, before.arena);
#endif
}

}  // namespace
