#include "toolkit/generation/parallel_batches.h"

#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

namespace csan::generation {
namespace {

// Restores the process's intra-op thread count whatever a test does to it.
class ParallelBatches : public ::testing::Test {
 protected:
  void SetUp() override { threads_ = at::get_num_threads(); }
  void TearDown() override { at::set_num_threads(threads_); }
  int threads_ = 1;
};

TEST_F(ParallelBatches, WorkerCountIsOnePerThreadUnlessAskedAndNeverAboveTheBatches) {
  at::set_num_threads(2);
  EXPECT_EQ(resolve_parallel_batches(0, 16), 2);
  EXPECT_EQ(resolve_parallel_batches(0, 1), 1);
  EXPECT_EQ(resolve_parallel_batches(0, 0), 1);
  EXPECT_EQ(resolve_parallel_batches(3, 16), 3);
  EXPECT_EQ(resolve_parallel_batches(3, 2), 2);
  EXPECT_EQ(resolve_parallel_batches(1, 16), 1);
}

TEST_F(ParallelBatches, EveryBatchRunsOnceEachWorkerOnOneThreadWithItsShareOfTheThreads) {
  at::set_num_threads(4);
  std::mutex mutex;
  std::vector<int> runs(37, 0);
  std::map<int64_t, std::thread::id> thread_of_worker;
  std::vector<int> intra_op_threads;
  for_each_batch_in_parallel(37, 2, [&](int64_t worker, int64_t batch) {
    const int inside = at::get_num_threads();
    std::lock_guard<std::mutex> lock(mutex);
    ++runs[static_cast<size_t>(batch)];
    const auto [at, inserted] = thread_of_worker.emplace(worker, std::this_thread::get_id());
    EXPECT_EQ(at->second, std::this_thread::get_id()) << "worker " << worker << " changed threads";
    intra_op_threads.push_back(inside);
  });
  for (size_t b = 0; b < runs.size(); ++b) EXPECT_EQ(runs[b], 1) << "batch " << b;
  for (const auto& [worker, thread] : thread_of_worker) {
    EXPECT_TRUE(worker == 0 || worker == 1) << worker;
    EXPECT_EQ(worker == 0, thread == std::this_thread::get_id()) << "worker 0 is the caller";
  }
  for (int n : intra_op_threads) EXPECT_EQ(n, 2);
  EXPECT_EQ(at::get_num_threads(), 4) << "the caller's count comes back";
}

TEST_F(ParallelBatches, OneWorkerRunsInOrderOnTheCaller) {
  std::vector<int64_t> order;
  for_each_batch_in_parallel(5, 1, [&](int64_t worker, int64_t batch) {
    EXPECT_EQ(worker, 0);
    order.push_back(batch);
  });
  EXPECT_EQ(order, (std::vector<int64_t>{0, 1, 2, 3, 4}));
}

TEST_F(ParallelBatches, WorkersSeeTheCallersGradMode) {
  torch::NoGradGuard no_grad;
  std::mutex mutex;
  std::vector<bool> grad_enabled;
  for_each_batch_in_parallel(8, 3, [&](int64_t, int64_t) {
    const bool enabled = torch::GradMode::is_enabled();
    std::lock_guard<std::mutex> lock(mutex);
    grad_enabled.push_back(enabled);
  });
  ASSERT_EQ(grad_enabled.size(), 8u);
  for (bool enabled : grad_enabled) EXPECT_FALSE(enabled);
}

TEST_F(ParallelBatches, FirstErrorStopsTheOthersAndIsRethrown) {
  at::set_num_threads(2);
  std::atomic<int> started{0};
  auto work = [&](int64_t, int64_t batch) {
    ++started;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    if (batch == 3) throw std::runtime_error("batch 3 failed");
  };
  EXPECT_THROW(for_each_batch_in_parallel(200, 2, work), std::runtime_error);
  EXPECT_LT(started.load(), 100) << "the workers kept taking batches after the error";
  EXPECT_EQ(at::get_num_threads(), 2);
}

}  // namespace
}  // namespace csan::generation
