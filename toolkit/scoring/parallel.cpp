#include "toolkit/scoring/parallel.h"

#include <algorithm>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace csan::scoring {

void parallel_for(size_t n, const std::function<void(size_t, size_t)>& body, size_t min_chunk) {
  size_t threads = std::max<size_t>(1, std::thread::hardware_concurrency());
  threads = std::min(threads, std::max<size_t>(1, n / std::max<size_t>(1, min_chunk)));
  if (threads <= 1) {
    body(0, n);
    return;
  }
  // More chunks than threads so that a slow chunk (long TER lines) does not leave a
  // core idle: threads take the next chunk from a shared counter.
  size_t chunks = std::min(n, threads * 8);
  std::mutex mutex;
  size_t next_chunk = 0;
  std::exception_ptr error;
  auto worker = [&]() {
    while (true) {
      size_t chunk;
      {
        std::lock_guard<std::mutex> lock(mutex);
        if (next_chunk == chunks || error) return;
        chunk = next_chunk++;
      }
      try {
        body(chunk * n / chunks, (chunk + 1) * n / chunks);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex);
        if (!error) error = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  for (size_t t = 0; t < threads; ++t) pool.emplace_back(worker);
  for (auto& thread : pool) thread.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace csan::scoring
