#include "toolkit/core/allocator_tuning.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#include "toolkit/core/process_memory.h"

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

// After loading a model, csan-generate hands back what loading freed: with the tuning
// above nothing else would, for the whole of decoding.
TEST(AllocatorTuning, FreedHeapPagesGoBackToTheKernelWhenAsked) {
#if !defined(__GLIBC__)
  GTEST_SKIP() << "glibc only";
#elif defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer replaces glibc's malloc";
#else
  ASSERT_TRUE(csan::core::keep_large_allocations_mapped());
  constexpr size_t big = size_t{64} << 20;
  sink = std::malloc(big);
  ASSERT_NE(sink, nullptr);
  std::memset(sink, 1, big);
  void* volatile after_it = std::malloc(1024);  // the freed block is not the heap's top
  std::free(sink);
  const double held = csan::core::resident_mib();
  EXPECT_TRUE(csan::core::release_free_heap_pages());
  const double released = csan::core::resident_mib();
  EXPECT_GT(held - released, 60) << "RSS " << held << " MiB before, " << released << " after";
  std::free(after_it);
#endif
}

}  // namespace
