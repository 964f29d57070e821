// cpp-httplib hands each accepted connection to a task queue, which its default thread
// pool serves with a fixed number of threads: a few idle or slow clients (an open socket
// that never sends, half a body) then hold every thread until their timeouts and the
// other clients wait behind them. This queue gives each connection a thread of its own, up
// to `max_threads` at once (the rest wait for one); shutdown() waits for all of them, so
// that every accepted request is answered before the server returns.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>

#include "toolkit/serve/http.h"

namespace csan::serve {

class ConnectionThreads : public httplib::TaskQueue {
 public:
  explicit ConnectionThreads(size_t max_threads) : max_threads_(max_threads) {}
  ~ConnectionThreads() override { shutdown(); }
  void enqueue(std::function<void()> connection) override;
  void shutdown() override;

 private:
  void work(std::function<void()> connection);

  const size_t max_threads_;
  std::mutex mutex_;
  std::condition_variable idle_;
  std::deque<std::function<void()>> waiting_;
  size_t running_ = 0;
};

}  // namespace csan::serve
