// Keeps the large per-step buffers of training mapped between steps. glibc serves
// allocations above its mmap threshold (128 KiB to 32 MiB, adaptive) with fresh
// mmap/munmap and trims the heap top back to the kernel, so every training step
// page-faults its activations and gradients in again (a large share of fairseq's CPU
// time, see shared/specs/cpu-performance.md). Call once at start-up,
// before the first large allocation.
#pragma once

namespace csan::core {

// Serves every allocation from the heap and never trims it: freed blocks are reused
// by the next step instead of being unmapped. Memory then stays at the peak of a step.
// Returns false if the C library refused the settings (non-glibc builds: no effect).
bool keep_large_allocations_mapped();

// Gives the heap's free pages back to the kernel now (tcmalloc's ReleaseFreeMemory when
// the program allocates with it, else glibc's malloc_trim), also those between blocks in use: for the end of a phase whose buffers are not reused (a model's
// loading and conversion before decoding). Returns whether any memory was released.
bool release_free_heap_pages();

}  // namespace csan::core
