#include "toolkit/serve/connection_threads.h"

#include <thread>

namespace csan::serve {

void ConnectionThreads::enqueue(std::function<void()> connection) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (running_ >= max_threads_) {
    waiting_.push_back(std::move(connection));
    return;
  }
  ++running_;
  std::thread(&ConnectionThreads::work, this, std::move(connection)).detach();
}

void ConnectionThreads::work(std::function<void()> connection) {
  for (;;) {
    connection();
    std::lock_guard<std::mutex> lock(mutex_);
    if (waiting_.empty()) {
      // The last statement under the lock: shutdown() may destroy *this once it sees 0.
      if (--running_ == 0) idle_.notify_all();
      return;
    }
    connection = std::move(waiting_.front());
    waiting_.pop_front();
  }
}

void ConnectionThreads::shutdown() {
  std::unique_lock<std::mutex> lock(mutex_);
  idle_.wait(lock, [&] { return running_ == 0 && waiting_.empty(); });
}

}  // namespace csan::serve
