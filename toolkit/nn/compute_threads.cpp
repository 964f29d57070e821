#include "toolkit/nn/compute_threads.h"

#include <ATen/Parallel.h>

#include "toolkit/core/cpu_threads.h"
#include "toolkit/core/error.h"

namespace csan::nn {

ComputeThreads use_compute_threads(int64_t requested, const std::string& option) {
  if (requested < 0)
    throw Error(option + " " + std::to_string(requested) +
                ": must be 0 (choose: OMP_NUM_THREADS, else every usable CPU) or a thread count");
  ComputeThreads chosen;
  if (requested > 0) {
    at::set_num_threads(static_cast<int>(requested));
    chosen.source = option;
  } else if (const auto variable = core::thread_count_variable()) {
    chosen.source = *variable;
  } else {
    at::set_num_threads(static_cast<int>(core::usable_cpu_count()));
    chosen.source = "usable CPUs";
  }
  chosen.threads = at::get_num_threads();
  return chosen;
}

std::string describe(const ComputeThreads& threads) {
  return std::to_string(threads.threads) + (threads.threads == 1 ? " thread (" : " threads (") + threads.source + ")";
}

}  // namespace csan::nn
