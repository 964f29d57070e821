// How long a call takes when repeated: the timing loop of the kernel benchmarks.
#pragma once

#include <chrono>
#include <cstdint>

namespace csan::bench {

struct Repeats {
  int64_t calls;
  double seconds;
};

// Calls `call` once to warm up, then again until about `seconds` have passed.
template <typename Call>
Repeats repeat_for(double seconds, Call call) {
  call();
  int64_t calls = 0;
  const auto start = std::chrono::steady_clock::now();
  double elapsed = 0;
  while (elapsed < seconds) {
    call();
    ++calls;
    elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  return {calls, elapsed};
}

}  // namespace csan::bench
