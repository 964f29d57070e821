// The trainer over real Gloo process groups (two ranks as two threads, loopback): ranks
// stay bit-identical, two workers equal one worker with update_freq 2 on the same
// batches, an empty shard batch still takes part, the EMA follows its formula on both
// ranks and resumes exactly, and a stop signal on one rank stops both after the same
// update.
#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <future>
#include <mutex>

#include "toolkit/checkpoint/checkpoint.h"
#include "toolkit/core/remove_tree.h"
#include "toolkit/training/c10d_gradient_sync.h"
#include "toolkit/training/distributed_launcher.h"
#include "toolkit/training/optimizer.h"
#include "toolkit/training/stop_signal.h"
#include "toolkit/training/trainer.h"
#include "toy_training.h"

namespace csan::training {
namespace {

using testing::kPad;
using testing::kVocab;

std::unique_ptr<Trainer> make_synced_trainer(std::unique_ptr<GradientSync> sync, double dropout = 0.0) {
  auto cfg = testing::toy_training_config();
  TrainerParts parts;
  {
    // Every rank builds the same initial weights from seed 1. The ranks are threads of
    // one process sharing torch's global generator: one at a time, or their draws
    // interleave and the weights differ from rank to rank and from the single worker.
    static std::mutex global_generator;
    std::lock_guard<std::mutex> lock(global_generator);
    torch::manual_seed(1);
    parts.model = std::make_shared<testing::ToyModel>(kVocab, 8, dropout);
  }
  parts.optimizer = build_optimizer(unique_parameters(*parts.model), cfg);
  parts.lr_scheduler = build_lr_scheduler(cfg);
  parts.criterion = build_criterion(cfg, kPad);
  parts.precision = std::make_unique<Fp32Precision>();
  parts.sync = std::move(sync);
  parts.clip_norm = 1.0;
  return std::make_unique<Trainer>(std::move(parts));
}

// Batches of different sizes and lengths, so ranks contribute unequal token counts.
TensorBatch make_uneven_batch(int index) { return testing::toy_batch(index, 1 + index % 4, 6); }

std::vector<torch::Tensor> copy_params(const Trainer& t) {
  std::vector<torch::Tensor> out;
  for (const auto& p : t.params()) out.push_back(p.detach().clone());
  return out;
}

DistributedSetup rank_setup(int rank, int port) {
  DistributedSetup s;
  s.world_size = 2;
  s.rank = rank;
  s.master_port = port;
  s.timeout_seconds = 20;
  s.bucket_cap_mb = 0.0005;  // several buckets even for the toy model
  s.source = "test";
  return s;
}

struct RankOutcome {
  std::vector<torch::Tensor> params;
  std::vector<double> losses;
  int64_t updates = 0;
  int stop_signal = 0;
};

// Trains K updates on two ranks; rank r takes batch (2 * k + r) at update k, the shard
// EpochIterator gives it, and batches_for(rank, k) may replace that.
template <typename BatchesFor>
std::pair<RankOutcome, RankOutcome> train_two_ranks(int updates, BatchesFor batches_for,
                                                    std::function<void(int, int)> before_update = {}) {
  const int port = find_free_port();
  auto run = [&](int rank) {
    auto trainer = make_synced_trainer(std::make_unique<C10dGradientSync>(rank_setup(rank, port), torch::kCPU));
    RankOutcome out;
    for (int k = 0; k < updates; ++k) {
      if (before_update) before_update(rank, k);
      const auto r = trainer->train_step(batches_for(rank, k));
      out.losses.push_back(r.stats.loss_sum);
      out.stop_signal = r.stop_signal;
      if (r.stop_signal) break;
    }
    out.params = copy_params(*trainer);
    out.updates = trainer->num_updates();
    return out;
  };
  auto other = std::async(std::launch::async, run, 1);
  auto mine = run(0);
  return {mine, other.get()};
}

TEST(DistributedTrainer, RanksHoldBitIdenticalParametersAfterKUpdates) {
  auto [r0, r1] =
      train_two_ranks(6, [](int rank, int k) { return std::vector<TensorBatch>{make_uneven_batch(2 * k + rank)}; });
  EXPECT_EQ(r0.updates, 6);
  EXPECT_EQ(r1.updates, 6);
  ASSERT_EQ(r0.params.size(), r1.params.size());
  for (size_t i = 0; i < r0.params.size(); ++i) EXPECT_TRUE(torch::equal(r0.params[i], r1.params[i])) << i;
  EXPECT_EQ(r0.losses, r1.losses) << "both ranks log the summed statistics";
  // ...and they moved: training happened.
  auto fresh = copy_params(*make_synced_trainer(std::make_unique<LocalGradientSync>()));
  EXPECT_FALSE(torch::equal(fresh[0], r0.params[0]));
}

TEST(DistributedTrainer, TwoWorkersEqualOneWorkerWithUpdateFreqTwo) {
  constexpr int kUpdates = 6;
  // Update k: rank 0 takes batch 2k, rank 1 batch 2k+1; the last update of rank 1 is a
  // padding batch (an epoch whose batch count is odd).
  auto batches_for = [](int rank, int k) {
    if (rank == 1 && k == kUpdates - 1) return std::vector<TensorBatch>{TensorBatch{}};
    return std::vector<TensorBatch>{make_uneven_batch(2 * k + rank)};
  };
  auto [r0, r1] = train_two_ranks(kUpdates, batches_for);

  auto single = make_synced_trainer(std::make_unique<LocalGradientSync>());
  std::vector<double> losses;
  for (int k = 0; k < kUpdates; ++k) {
    std::vector<TensorBatch> group{make_uneven_batch(2 * k)};
    if (k != kUpdates - 1) group.push_back(make_uneven_batch(2 * k + 1));
    losses.push_back(single->train_step(group).stats.loss_sum);
  }
  const auto expected = copy_params(*single);
  double worst = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    const double scale = expected[i].abs().max().item<double>() + 1e-12;
    worst = std::max(worst, (r0.params[i] - expected[i]).abs().max().item<double>() / scale);
  }
  EXPECT_LT(worst, 1e-5) << "largest relative difference";
  for (int k = 0; k < kUpdates; ++k) EXPECT_NEAR(r0.losses[k], losses[k], 1e-9 * std::abs(losses[k])) << k;
}

// The EMA under data parallelism: each rank averages its own weights, which the all-reduce
// keeps bit-identical, so the ranks' EMAs are bit-identical and follow fairseq's formula;
// both ranks resumed from rank 0's checkpoint continue weights and EMA exactly.
TEST(DistributedTrainer, EmaIsTheSameOnBothRanksByTheFormulaAndResumesExactly) {
  constexpr double kDecay = 0.75;
  constexpr int64_t kStart = 2;
  struct EmaOutcome {
    std::vector<torch::Tensor> params, ema;
    bool by_formula = true;
  };
  // Updates [from, to) on two ranks, from `resume_from` when given; rank 0 then saves to
  // `save_to` when given.
  auto train = [&](int from, int to, const std::string& resume_from, const std::string& save_to) {
    const int port = find_free_port();
    auto run = [&](int rank) {
      auto trainer = make_synced_trainer(std::make_unique<C10dGradientSync>(rank_setup(rank, port), torch::kCPU));
      trainer->enable_ema({true, kDecay, kStart, /*update_freq=*/1, false, /*seed_model=*/""});
      if (!resume_from.empty()) {
        checkpoint::CheckpointReader reader(resume_from);
        // Dropout is off: no RNG state to restore (the ranks share one generator here).
        trainer->load_state(reader, reader.progress(), {/*optimizer=*/true, /*ema=*/true, /*rng=*/false});
      }
      EmaOutcome out;
      std::vector<torch::Tensor> expected;
      for (const auto& a : trainer->ema()->averages()) expected.push_back(a.clone());
      for (int k = from; k < to; ++k) {
        trainer->train_step({make_uneven_batch(2 * k + rank)});
        const auto weights = copy_params(*trainer);
        for (size_t i = 0; i < expected.size(); ++i) {
          if (trainer->num_updates() < kStart)
            expected[i] = weights[i];
          else
            expected[i].mul_(kDecay).add_(weights[i], 1.0 - kDecay);
          out.by_formula &= torch::equal(trainer->ema()->averages()[i], expected[i]);
        }
      }
      if (rank == 0 && !save_to.empty()) {
        checkpoint::CheckpointWriter writer;
        checkpoint::CheckpointMeta meta;
        meta.recipe_yaml = "model:\n  arch: toy\n";
        writer.set_meta(meta);
        checkpoint::TrainingProgress progress;
        progress.num_updates = trainer->num_updates();
        writer.set_progress(progress);
        trainer->save_state(writer);
        writer.write(save_to);
      }
      out.params = copy_params(*trainer);
      for (const auto& a : trainer->ema()->averages()) out.ema.push_back(a.clone());
      return out;
    };
    auto other = std::async(std::launch::async, run, 1);
    auto mine = run(0);
    return std::make_pair(mine, other.get());
  };
  const auto dir = std::filesystem::temp_directory_path() / ("csan-distributed-ema-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "ema.pt").string();
  const auto [full0, full1] = train(0, 6, "", "");
  const auto [first0, first1] = train(0, 3, "", path);
  const auto [resumed0, resumed1] = train(3, 6, path, "");
  for (const EmaOutcome* o : {&full0, &full1, &first0, &first1, &resumed0, &resumed1}) EXPECT_TRUE(o->by_formula);
  ASSERT_EQ(full0.ema.size(), full0.params.size());
  for (size_t i = 0; i < full0.ema.size(); ++i) {
    EXPECT_TRUE(torch::equal(full0.ema[i], full1.ema[i])) << i;
    EXPECT_TRUE(torch::equal(resumed0.ema[i], full0.ema[i])) << i;
    EXPECT_TRUE(torch::equal(resumed1.ema[i], full0.ema[i])) << i;
    EXPECT_TRUE(torch::equal(resumed0.params[i], full0.params[i])) << i;
  }
  // An average, not a copy of the weights (decay from update 2 on).
  EXPECT_FALSE(torch::equal(full0.ema[0], full0.params[0]));
  remove_tree(dir.string());
}

TEST(DistributedTrainer, AStopSignalOnOneRankStopsBothAfterTheSameUpdate) {
  StopSignalGuard guard;  // handlers record the signal instead of ending the test
  auto [r0, r1] = train_two_ranks(
      8, [](int rank, int k) { return std::vector<TensorBatch>{make_uneven_batch(2 * k + rank)}; },
      [](int rank, int k) {
        // Signals are per process; in this one-process test rank 1 raises it right before
        // its 4th update, and rank 0 has just passed the point where it reads the flag.
        if (rank == 1 && k == 3) std::raise(SIGTERM);
      });
  EXPECT_EQ(r0.stop_signal, SIGTERM);
  EXPECT_EQ(r1.stop_signal, SIGTERM);
  // Whether rank 0 read the flag before or after the raise, the sum is non-zero at the
  // 4th update for both.
  EXPECT_EQ(r0.updates, 4);
  EXPECT_EQ(r1.updates, 4);
  { StopSignalGuard clear; }  // a new guard clears the recorded signal for later tests
}

}  // namespace
}  // namespace csan::training
