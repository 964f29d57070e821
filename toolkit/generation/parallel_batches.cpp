#include "toolkit/generation/parallel_batches.h"

#include <ATen/Parallel.h>
#include <ATen/ThreadLocalState.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace csan::generation {

int64_t resolve_parallel_batches(int64_t requested, int64_t batches) {
  const int64_t wanted = requested > 0 ? requested : static_cast<int64_t>(at::get_num_threads());
  return std::max<int64_t>(1, std::min(wanted, batches));
}

void for_each_batch_in_parallel(int64_t batches, int64_t workers,
                                const std::function<void(int64_t, int64_t)>& work) {
  if (workers <= 1 || batches <= 1) {
    for (int64_t b = 0; b < batches; ++b) work(0, b);
    return;
  }
  const int threads = at::get_num_threads();
  // ATen sizes a new thread's OpenMP team from the process-wide count at the thread's
  // first parallel op, so setting it here gives every worker its share.
  at::set_num_threads(std::max(1, threads / static_cast<int>(workers)));
  const at::ThreadLocalState caller_state;
  std::atomic<int64_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex error_mutex, setup_mutex;
  std::condition_variable all_set_up;
  int64_t set_up = 0;
  auto run = [&](int64_t worker) {
    try {
      at::ThreadLocalStateGuard state(caller_state);
      {
        // That first-op set-up also resizes process-wide pools (ATen's pthreadpool, the
        // oneDNN cache): one thread at a time, and nobody computes until all are done.
        std::unique_lock<std::mutex> lock(setup_mutex);
        at::get_num_threads();
        if (++set_up == workers) all_set_up.notify_all();
        all_set_up.wait(lock, [&] { return set_up == workers; });
      }
      for (int64_t b; !failed.load() && (b = next.fetch_add(1)) < batches;) work(worker, b);
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
      failed = true;
    }
  };
  std::vector<std::thread> others;
  for (int64_t w = 1; w < workers; ++w) others.emplace_back(run, w);
  run(0);
  for (auto& t : others) t.join();
  at::set_num_threads(threads);
  if (error) std::rethrow_exception(error);
}

}  // namespace csan::generation
