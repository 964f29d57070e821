#include "toolkit/core/allocator_tuning.h"

// <cstddef> first: __GLIBC__ comes from the C library's own headers, so testing it before
// any of them is included silently compiled this whole function to "return false".
#include <dlfcn.h>

#include <cstddef>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace csan::core {

bool keep_large_allocations_mapped() {
#if defined(__GLIBC__)
  // M_MMAP_MAX 0: no allocation is served by its own mmap (the threshold itself cannot
  // exceed 32 MiB, smaller than a vocabulary-wide logits buffer). Huge trim threshold:
  // the heap top is not given back below 1 GiB of free space.
  bool ok = mallopt(M_MMAP_MAX, 0) == 1;
  ok = mallopt(M_TRIM_THRESHOLD, 1 << 30) == 1 && ok;
  return ok;
#else
  return false;
#endif
}

bool release_free_heap_pages() {
  // The executables may allocate with tcmalloc (cmake/CsanAllocator.cmake),
  // which keeps freed spans until told; looked up at run time, so nothing links it here.
  using Release = void (*)();
  if (const auto tcmalloc_release =
          reinterpret_cast<Release>(::dlsym(RTLD_DEFAULT, "MallocExtension_ReleaseFreeMemory"))) {
    tcmalloc_release();
    return true;
  }
#if defined(__GLIBC__)
  return malloc_trim(0) == 1;
#else
  return false;
#endif
}

}  // namespace csan::core
