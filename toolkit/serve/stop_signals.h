// SIGTERM and SIGINT for a server: the first asks it to stop gracefully (the callback runs
// on a thread of its own, not in a signal handler), a second one ends the process at once
// (exit status 128 + the signal). Construct it before starting any other thread: it blocks
// both signals in the calling thread, which every later thread inherits, and waits for
// them with sigwait() on its own thread.
#pragma once

#include <functional>
#include <thread>

namespace csan::serve {

class StopSignals {
 public:
  explicit StopSignals(std::function<void(int signal)> on_first);
  // Stops waiting and unblocks the signals again.
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  std::thread waiter_;
};

}  // namespace csan::serve
