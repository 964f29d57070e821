#include "toolkit/serve/batch_queue.h"

#include <ATen/Parallel.h>

#include <algorithm>

#include "toolkit/core/allocator_tuning.h"

namespace csan::serve {

namespace {

// The batch cut into one part per CPU thread where it has enough sentences: the Translator
// then decodes the parts side by side, each on one thread (generation/parallel_batches.h),
// as csan-generate decodes a file. One batch on all threads instead makes every small
// operation of a decoding step an OpenMP team (measured with tools/bench/serve-load at 64
// clients: see docs/csan-serve.md).
tasks::TranslateOptions split_for_threads(tasks::TranslateOptions options, size_t sentences) {
  const auto threads = static_cast<size_t>(std::max(1, at::get_num_threads()));
  const auto per_thread = static_cast<int64_t>((sentences + threads - 1) / threads);
  if (options.limits.batch_size == 0 || per_thread < options.limits.batch_size)
    options.limits.batch_size = std::max<int64_t>(1, per_thread);
  return options;
}

}  // namespace

void BatchQueue::release_memory(std::unique_lock<std::mutex>& lock) {
  batches_since_release_ = false;
  last_release_ = Clock::now();
  lock.unlock();
  core::release_free_heap_pages();
  metrics_.memory_released();
  lock.lock();
}

BatchQueue::BatchQueue(tasks::Translator& translator, const QueueOptions& options, Metrics& metrics)
    : translator_(translator), options_(options), metrics_(metrics) {
  if (options_.max_batch_tokens < 1) throw Error("max-batch-tokens: must be at least 1", ErrorKind::bad_option);
  if (options_.max_wait_ms < 0) throw Error("max-wait-ms: must not be negative", ErrorKind::bad_option);
  if (options_.max_queue < 1) throw Error("max-queue: must be at least 1", ErrorKind::bad_option);
  if (options_.release_memory_ms < 0)
    throw Error("release-memory-ms: must not be negative (0: never)", ErrorKind::bad_option);
  batcher_ = std::thread([this] { run(); });
}

BatchQueue::~BatchQueue() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  arrived_.notify_all();
  batcher_.join();
}

std::shared_ptr<TranslationJob> BatchQueue::submit(std::vector<std::string> lines,
                                                   const tasks::TranslateOptions& options, Clock::time_point deadline) {
  auto job = std::make_shared<TranslationJob>();
  for (const auto& line : lines) job->source_tokens += translator_.source_tokens(line);
  job->lines = std::move(lines);
  job->options = options;
  job->arrived = Clock::now();
  job->deadline = deadline;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (queue_.size() >= options_.max_queue)
      throw QueueFull("the queue is full (" + std::to_string(options_.max_queue) + " requests waiting)");
    queue_.push_back(job);
  }
  arrived_.notify_all();
  return job;
}

bool BatchQueue::wait(TranslationJob& job) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (finished_.wait_until(lock, job.deadline, [&] { return job.done; })) return true;
  if (!job.running)
    queue_.erase(std::remove_if(queue_.begin(), queue_.end(), [&](const auto& j) { return j.get() == &job; }),
                 queue_.end());
  return false;
}

size_t BatchQueue::queued() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return queue_.size();
}

void BatchQueue::warm_up(const std::vector<std::string>& lines, const tasks::TranslateOptions& options,
                         const std::string& origin) {
  translator_.translate(lines, split_for_threads(options, lines.size()), origin);
}

int64_t BatchQueue::waiting_tokens(const tasks::TranslateOptions& options) const {
  int64_t tokens = 0;
  for (const auto& job : queue_)
    if (job->options == options) tokens += job->source_tokens;
  return tokens;
}

void BatchQueue::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  const auto work = [&] { return stopping_ || !queue_.empty(); };
  const auto release_interval = std::chrono::milliseconds(options_.release_memory_ms);
  for (;;) {
    if (options_.release_memory_ms > 0 && batches_since_release_) {
      if (!arrived_.wait_for(lock, release_interval, work)) {
        release_memory(lock);  // idle since the last batch for a whole interval
        continue;
      }
    } else {
      arrived_.wait(lock, work);
    }
    if (queue_.empty()) return;  // stopping, and nothing left to translate
    // Wait for company until the oldest request has waited max_wait_ms, unless a stop or
    // a full batch ends the wait early; the oldest may be abandoned meanwhile: start over.
    const auto oldest = queue_.front();
    arrived_.wait_until(lock, oldest->arrived + std::chrono::milliseconds(options_.max_wait_ms), [&] {
      return stopping_ || queue_.empty() || queue_.front() != oldest ||
             waiting_tokens(oldest->options) >= options_.max_batch_tokens;
    });
    if (queue_.empty() || queue_.front() != oldest) continue;
    const tasks::TranslateOptions options = queue_.front()->options;
    std::vector<std::shared_ptr<TranslationJob>> batch;
    int64_t tokens = 0;
    for (auto it = queue_.begin(); it != queue_.end();) {
      if ((*it)->options == options && (batch.empty() || tokens + (*it)->source_tokens <= options_.max_batch_tokens)) {
        tokens += (*it)->source_tokens;
        (*it)->running = true;
        batch.push_back(*it);
        it = queue_.erase(it);
      } else {
        ++it;
      }
    }
    lock.unlock();

    std::vector<std::string> lines;
    for (const auto& job : batch) lines.insert(lines.end(), job->lines.begin(), job->lines.end());
    const auto started = Clock::now();
    std::vector<std::vector<tasks::TextHypothesis>> hypotheses;
    std::exception_ptr error;
    try {
      hypotheses = translator_.translate(lines, split_for_threads(options, lines.size()), "request");
    } catch (...) {
      error = std::current_exception();
    }
    const double seconds = std::chrono::duration<double>(Clock::now() - started).count();
    int64_t target_tokens = 0;
    for (const auto& sentence : hypotheses)
      if (!sentence.empty()) target_tokens += static_cast<int64_t>(sentence.front().tokens.size());
    metrics_.batch(lines.size(), tokens, target_tokens, seconds);

    lock.lock();
    size_t next = 0;
    for (const auto& job : batch) {
      if (error) {
        job->error = error;
      } else {
        const auto first = hypotheses.begin() + static_cast<std::ptrdiff_t>(next);
        job->hypotheses.assign(std::make_move_iterator(first),
                               std::make_move_iterator(first + static_cast<std::ptrdiff_t>(job->lines.size())));
      }
      next += job->lines.size();
      job->done = true;
    }
    finished_.notify_all();
    batches_since_release_ = true;
    if (options_.release_memory_ms > 0 && Clock::now() - last_release_ >= release_interval) release_memory(lock);
  }
}

}  // namespace csan::serve
