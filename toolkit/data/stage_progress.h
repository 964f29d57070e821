// A progress line for one parallel stage: workers bump an atomic counter and a monitor
// thread redraws the line. Nothing runs unless stderr is a terminal.
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "toolkit/core/progress.h"

namespace csan::data {

class StageProgress {
 public:
  StageProgress(const std::string& label, long long total, bool wanted);
  ~StageProgress();  // stops the monitor and clears the line

  // The counter to pass to the stage; null when no progress is shown.
  std::atomic<int64_t>* counter() { return line_ ? &done_ : nullptr; }

 private:
  std::atomic<int64_t> done_{0};
  std::unique_ptr<ProgressLine> line_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread monitor_;
};

}  // namespace csan::data
