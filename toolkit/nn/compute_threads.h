// How many threads LibTorch's CPU operators use in csan-train and csan-generate: the
// user's --threads N; else OMP_NUM_THREADS / MKL_NUM_THREADS when set (LibTorch follows
// them, and csan-train's local launcher sets them to each worker's share of the cores);
// else every CPU the process may use (core::usable_cpu_count), as PyTorch gives where it
// counts the cores right.
#pragma once

#include <cstdint>
#include <string>

namespace csan::nn {

struct ComputeThreads {
  int threads = 1;
  std::string source;  // "--threads", "OMP_NUM_THREADS" or "usable CPUs"
};

// Sets LibTorch's intra-op thread count. `requested` 0 means "choose"; below 0 is an
// error naming `option`.
ComputeThreads use_compute_threads(int64_t requested, const std::string& option = "--threads");

// "2 threads (usable CPUs)", for logs.
std::string describe(const ComputeThreads& threads);

}  // namespace csan::nn
