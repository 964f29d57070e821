// Splits [0, n) into one contiguous chunk per worker and runs them on std::threads.
// Callers keep one output per chunk and concatenate them in chunk order, so results do
// not depend on the number of workers.
#pragma once

#include <algorithm>
#include <cstddef>
#include <exception>
#include <thread>
#include <vector>

namespace csan::data {

inline size_t chunk_count(size_t n, int workers) {
  return std::max<size_t>(1, std::min<size_t>(n, static_cast<size_t>(std::max(workers, 1))));
}

// fn(chunk, begin, end) for chunk in [0, chunk_count(n, workers)); chunk 0 runs on the
// calling thread. The first exception thrown by any chunk is rethrown here.
template <typename Fn>
void parallel_chunks(size_t n, int workers, Fn&& fn) {
  const size_t chunks = chunk_count(n, workers);
  std::vector<std::exception_ptr> errors(chunks);
  auto run = [&](size_t c) {
    try {
      fn(c, n * c / chunks, n * (c + 1) / chunks);
    } catch (...) {
      errors[c] = std::current_exception();
    }
  };
  std::vector<std::thread> threads;
  for (size_t c = 1; c < chunks; ++c) threads.emplace_back(run, c);
  run(0);
  for (auto& t : threads) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace csan::data
