// The epoch position in a checkpoint is world-size independent: N workers save it, M
// workers resume from it and together take exactly the batches that were left.
#include <gtest/gtest.h>

#include <random>

#include "toolkit/data/epoch_iterator.h"

namespace csan::training {
namespace {

using data::Batch;
using data::EpochIterator;

struct Sizes {
  std::vector<int32_t> src, tgt;
};

Sizes random_sizes(int n, uint32_t seed) {
  std::mt19937 rng(seed);
  Sizes s;
  for (int i = 0; i < n; ++i) {
    s.src.push_back(1 + static_cast<int32_t>(rng() % 30));
    s.tgt.push_back(1 + static_cast<int32_t>(rng() % 30));
  }
  return s;
}

const data::BatchingOptions kBatching{150, 0, 1};
constexpr uint64_t kSeed = 5;

// The rest of the epoch as the ranks of `world` take it, interleaved in global order
// (update k: rank 0's k-th batch, rank 1's k-th, ...), padding batches dropped.
std::vector<Batch> rest_of_epoch(const Sizes& s, int world, data::EpochPosition start, int64_t& end_position) {
  std::vector<EpochIterator> ranks;
  for (int r = 0; r < world; ++r) ranks.emplace_back(s.src, s.tgt, kBatching, kSeed, true, r, world, start);
  std::vector<Batch> out;
  while (!ranks[0].end_of_epoch())
    for (auto& it : ranks) {
      EXPECT_FALSE(it.end_of_epoch()) << "ranks must have equally many batches";
      const Batch& b = it.next();
      if (!b.empty()) out.push_back(b);
    }
  for (auto& it : ranks) EXPECT_TRUE(it.end_of_epoch());
  end_position = ranks[0].position().next_batch;
  return out;
}

TEST(DistributedEpochPosition, CountsGlobalBatches) {
  const auto s = random_sizes(300, 1);
  EpochIterator r0(s.src, s.tgt, kBatching, kSeed, true, 0, 2), r1(s.src, s.tgt, kBatching, kSeed, true, 1, 2);
  for (int k = 0; k < 3; ++k) {
    r0.next();
    r1.next();
  }
  EXPECT_EQ(r0.position().next_batch, 6);
  EXPECT_EQ(r1.position().next_batch, 6);
  EXPECT_EQ(r0.position().epoch, 1);
}

TEST(DistributedEpochPosition, ResumeWithAnotherWorldSizeTakesExactlyTheRemainingBatches) {
  const auto s = random_sizes(300, 2);
  int64_t total = 0;
  const auto whole = rest_of_epoch(s, 1, {2, 0}, total);
  ASSERT_GT(whole.size(), 12u);
  ASSERT_EQ(static_cast<int64_t>(whole.size()), total);
  // Positions a 2-worker run saves (even) and others (odd: saved by 1 or 3 workers).
  for (int resumed_world : {1, 2, 3})
    for (int64_t position : {int64_t{0}, int64_t{5}, int64_t{6}, total - 1, total}) {
      int64_t end = 0;
      const auto rest = rest_of_epoch(s, resumed_world, {2, position}, end);
      EXPECT_EQ(rest, std::vector<Batch>(whole.begin() + position, whole.end()))
          << "resumed by " << resumed_world << " at " << position;
      EXPECT_EQ(end, total);
    }
}

TEST(DistributedEpochPosition, TwoWorkersSeeTheBatchesOfOneWorkerWithUpdateFreqTwo) {
  const auto s = random_sizes(200, 3);
  EpochIterator single(s.src, s.tgt, kBatching, kSeed, true, 0, 1);
  EpochIterator r0(s.src, s.tgt, kBatching, kSeed, true, 0, 2), r1(s.src, s.tgt, kBatching, kSeed, true, 1, 2);
  while (!r0.end_of_epoch()) {
    std::vector<Batch> update_freq_2;
    for (int i = 0; i < 2 && !single.end_of_epoch(); ++i) update_freq_2.push_back(single.next());
    std::vector<Batch> two_workers{r0.next(), r1.next()};
    if (two_workers.back().empty()) two_workers.pop_back();
    EXPECT_EQ(update_freq_2, two_workers);
  }
  EXPECT_TRUE(single.end_of_epoch());
}

}  // namespace
}  // namespace csan::training
