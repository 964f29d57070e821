// Dynamic batching for one model: requests from every connection wait in one bounded
// queue, and a batcher thread translates them in batches by source tokens. A batch takes
// the oldest request and every later one with the same search options, until the batch
// holds --max-batch-tokens source tokens or the oldest request has waited --max-wait-ms;
// the batch is one tasks::Translator::translate() call (csan-generate's batching and search
// inside it), and each request gets its own sentences' results back, in order.
//
// A request whose deadline passes while it waits is dropped from the queue (its client
// gets 504); one whose batch is already running is translated and its result discarded.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "toolkit/core/error.h"
#include "toolkit/serve/metrics.h"
#include "toolkit/tasks/translator.h"

namespace csan::serve {

using Clock = std::chrono::steady_clock;

struct QueueOptions {
  int64_t max_batch_tokens = 4096;  // source tokens gathered before a batch starts
  int64_t max_wait_ms = 5;          // how long the oldest request waits for company
  size_t max_queue = 1024;          // requests waiting; more are refused (QueueFull)
  // Freed heap pages go back to the kernel at most this often (0: never): after a batch once
  // the interval has passed, and when the queue has stayed empty that long after a batch.
  // Why: the allocator keeps every page a batch of a new shape touched, so a long-lived
  // server's resident memory otherwise creeps up to the sum of its batches' peaks.
  int64_t release_memory_ms = 0;
};

// The queue is full: the caller answers 503 with Retry-After.
class QueueFull : public Error {
 public:
  using Error::Error;
};

struct TranslationJob {
  std::vector<std::string> lines;
  tasks::TranslateOptions options;
  int64_t source_tokens = 0;
  Clock::time_point arrived, deadline;
  // Set by the batcher when done is true: one list of hypotheses per line, or the error.
  std::vector<std::vector<tasks::TextHypothesis>> hypotheses;
  std::exception_ptr error;
  bool running = false, done = false;
};

class BatchQueue {
 public:
  BatchQueue(tasks::Translator& translator, const QueueOptions& options, Metrics& metrics);
  // Finishes what is queued, then stops the batcher.
  ~BatchQueue();
  BatchQueue(const BatchQueue&) = delete;
  BatchQueue& operator=(const BatchQueue&) = delete;

  // Queues `lines` (checked UTF-8, counted by the translator's encoder); throws QueueFull.
  std::shared_ptr<TranslationJob> submit(std::vector<std::string> lines, const tasks::TranslateOptions& options,
                                         Clock::time_point deadline);
  // Blocks until the job is done (true) or its deadline passes (false: the job is
  // abandoned, and dropped from the queue if its batch has not started).
  bool wait(TranslationJob& job);
  size_t queued() const;
  // Translates `lines` once, as one batch of the batcher's (same split, same search), and
  // discards the result: for the start, before serving. The allocator's heap then holds
  // the pages a batch that large needs, so that the resident memory stays flat when the
  // traffic's batches (no larger) come; otherwise it creeps up for minutes as batches of
  // new shapes first touch free pages. Errors name `origin` and the line.
  void warm_up(const std::vector<std::string>& lines, const tasks::TranslateOptions& options,
               const std::string& origin);

 private:
  void run();
  // Gives the heap's free pages back (unlocked: the lock is released around the call).
  void release_memory(std::unique_lock<std::mutex>& lock);
  int64_t waiting_tokens(const tasks::TranslateOptions& options) const;

  tasks::Translator& translator_;
  const QueueOptions options_;
  Metrics& metrics_;
  mutable std::mutex mutex_;
  std::condition_variable arrived_, finished_;
  std::deque<std::shared_ptr<TranslationJob>> queue_;
  bool stopping_ = false;
  bool batches_since_release_ = false;
  Clock::time_point last_release_ = Clock::now();
  std::thread batcher_;
};

}  // namespace csan::serve
