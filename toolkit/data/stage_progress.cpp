#include "toolkit/data/stage_progress.h"

#include <chrono>

namespace csan::data {

StageProgress::StageProgress(const std::string& label, long long total, bool wanted) {
  if (!wanted || !stderr_is_tty()) return;
  line_ = std::make_unique<ProgressLine>(label, total);
  monitor_ = std::thread([this] {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!wake_.wait_for(lock, std::chrono::milliseconds(200), [this] { return stop_; }))
      line_->update(done_.load(std::memory_order_relaxed));
  });
}

StageProgress::~StageProgress() {
  if (!line_) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  monitor_.join();
  line_->finish();
}

}  // namespace csan::data
