#include "toolkit/serve/stop_signals.h"

#include <pthread.h>
#include <unistd.h>

#include <csignal>

namespace csan::serve {

namespace {

// SIGUSR2 is sent to our own waiter to end it when the server stopped for another reason.
sigset_t stop_set() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGUSR2);
  return set;
}

}  // namespace

StopSignals::StopSignals(std::function<void(int signal)> on_first) {
  const sigset_t set = stop_set();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  waiter_ = std::thread([set, on_first = std::move(on_first)] {
    int signal = 0;
    bool stopping = false;
    while (sigwait(&set, &signal) == 0) {
      if (signal == SIGUSR2) return;
      if (stopping) _exit(128 + signal);
      stopping = true;
      on_first(signal);
    }
  });
}

StopSignals::~StopSignals() {
  pthread_kill(waiter_.native_handle(), SIGUSR2);
  waiter_.join();
  const sigset_t set = stop_set();
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
}

}  // namespace csan::serve
