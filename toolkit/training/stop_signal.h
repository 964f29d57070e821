// SIGINT/SIGTERM during training: the handler only records the signal; the training
// loop checks it between updates, saves a checkpoint and exits, so an interrupted run
// resumes exactly where it stopped.
#pragma once

namespace csan::training {

// Installs the handlers for the lifetime of the object and restores the previous ones.
// Guards nest: an inner one (the training loop's) leaves the outer one's handlers and
// the signal it already recorded in place, so that a caller that guards a whole run
// (csan.train, from its set-up on) misses no signal.
class StopSignalGuard {
 public:
  StopSignalGuard();
  ~StopSignalGuard();
  StopSignalGuard(const StopSignalGuard&) = delete;
  StopSignalGuard& operator=(const StopSignalGuard&) = delete;
  // The signal received (SIGINT, SIGTERM), or 0.
  static int pending();
};

}  // namespace csan::training
