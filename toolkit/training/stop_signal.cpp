#include "toolkit/training/stop_signal.h"

#include <csignal>

namespace csan::training {

namespace {
volatile std::sig_atomic_t received = 0;
struct sigaction previous_int, previous_term;
int guards = 0;  // guards alive; the outermost installs and restores

extern "C" void record_signal(int signal) { received = signal; }
}  // namespace

StopSignalGuard::StopSignalGuard() {
  if (guards++ > 0) return;
  received = 0;
  struct sigaction action {};
  action.sa_handler = record_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, &previous_int);
  sigaction(SIGTERM, &action, &previous_term);
}

StopSignalGuard::~StopSignalGuard() {
  if (--guards > 0) return;
  sigaction(SIGINT, &previous_int, nullptr);
  sigaction(SIGTERM, &previous_term, nullptr);
}

int StopSignalGuard::pending() { return received; }

}  // namespace csan::training
