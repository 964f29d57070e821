#include "toolkit/data/batching.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

#include "toolkit/core/error.h"
#include "toolkit/data/epoch_iterator.h"
#include "toolkit/data/language_pair_dataset.h"

namespace csan::data {
namespace {

struct Sizes {
  std::vector<int32_t> src, tgt;
};

Sizes random_sizes(int n, int max_len, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int32_t> len(1, max_len);
  Sizes s;
  for (int i = 0; i < n; ++i) {
    s.src.push_back(len(gen));
    s.tgt.push_back(len(gen));
  }
  return s;
}

int64_t padded_cost(const Batch& b, const Sizes& s) {
  int64_t longest = 0;
  for (int64_t i : b) longest = std::max<int64_t>(longest, std::max(s.src[i], s.tgt[i]));
  return longest * static_cast<int64_t>(b.size());
}

TEST(Batching, NeverExceedsMaxTokensOrSentencesAndCoversEachExampleOnce) {
  const Sizes s = random_sizes(3000, 120, 7);
  for (int64_t max_tokens : {120, 500, 4096}) {
    for (int64_t max_sentences : {0, 16}) {
      for (int64_t multiple : {1, 8}) {
        BatchingOptions opt{max_tokens, max_sentences, multiple};
        auto batches = batch_by_size(ordered_indices(s.src, s.tgt, 3), s.src, s.tgt, opt);
        std::vector<int> seen(s.src.size(), 0);
        for (const auto& b : batches) {
          ASSERT_FALSE(b.empty());
          EXPECT_LE(padded_cost(b, s), max_tokens);
          if (max_sentences > 0) {
            EXPECT_LE(static_cast<int64_t>(b.size()), max_sentences);
          }
          for (int64_t i : b) ++seen[i];
        }
        for (int c : seen) ASSERT_EQ(c, 1);
      }
    }
  }
}

TEST(Batching, BatchesAreFullUpToTheLimit) {
  // Every example has cost 10: batches of floor(100 / 10) = 10 sentences, exactly.
  Sizes s{std::vector<int32_t>(95, 10), std::vector<int32_t>(95, 7)};
  auto batches = batch_by_size(ordered_indices(s.src, s.tgt, 1), s.src, s.tgt, {100, 0, 1});
  ASSERT_EQ(batches.size(), 10u);
  for (size_t i = 0; i < 9; ++i) EXPECT_EQ(batches[i].size(), 10u);
  EXPECT_EQ(batches[9].size(), 5u);
  // With a required multiple of 8, full batches are cut to 8 and the rest carried.
  auto by8 = batch_by_size(ordered_indices(s.src, s.tgt, 1), s.src, s.tgt, {100, 0, 8});
  EXPECT_EQ(by8[0].size(), 8u);
}

TEST(Batching, OrderIsByLengthSoBatchesHaveLittlePadding) {
  const Sizes s = random_sizes(2000, 100, 11);
  auto indices = ordered_indices(s.src, s.tgt, 5);
  for (size_t k = 1; k < indices.size(); ++k) {
    const auto a = indices[k - 1], b = indices[k];
    ASSERT_LE(s.src[a], s.src[b]);
    if (s.src[a] == s.src[b]) {
      ASSERT_LE(s.tgt[a], s.tgt[b]);
    }
  }
  // Same seed, same order; another seed changes ties.
  EXPECT_EQ(indices, ordered_indices(s.src, s.tgt, 5));
  EXPECT_NE(indices, ordered_indices(s.src, s.tgt, 6));
}

TEST(Batching, ExampleLongerThanMaxTokensIsAnError) {
  Sizes s{{3, 50}, {3, 4}};
  try {
    batch_by_size({0, 1}, s.src, s.tgt, {20, 0, 1});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("max_tokens 20"), std::string::npos) << e.what();
  }
}

TEST(Batching, ShardsPartitionTheBatchesAndHaveEqualLength) {
  std::vector<Batch> batches;
  for (int i = 0; i < 7; ++i) batches.push_back({i});
  auto r0 = shard_batches(batches, 0, 3), r1 = shard_batches(batches, 1, 3), r2 = shard_batches(batches, 2, 3);
  ASSERT_EQ(r0.size(), 3u);
  ASSERT_EQ(r1.size(), 3u);
  ASSERT_EQ(r2.size(), 3u);
  EXPECT_EQ(r0, (std::vector<Batch>{{0}, {3}, {6}}));
  EXPECT_EQ(r1, (std::vector<Batch>{{1}, {4}, {}}));  // padded with an empty batch
  EXPECT_EQ(r2, (std::vector<Batch>{{2}, {5}, {}}));
  EXPECT_THROW(shard_batches(batches, 3, 3), Error);
}

std::vector<Batch> drain_epoch(EpochIterator& it) {
  std::vector<Batch> out;
  while (!it.end_of_epoch()) out.push_back(it.next());
  return out;
}

TEST(EpochIterator, EachEpochCoversEveryExampleOnceInANewOrder) {
  const Sizes s = random_sizes(500, 40, 2);
  EpochIterator it(s.src, s.tgt, {256, 0, 1}, 42);
  std::vector<std::vector<Batch>> epochs;
  for (int e = 1; e <= 3; ++e) {
    EXPECT_EQ(it.epoch(), e);
    epochs.push_back(drain_epoch(it));
    std::multiset<int64_t> all;
    for (const auto& b : epochs.back()) all.insert(b.begin(), b.end());
    ASSERT_EQ(all.size(), 500u);
    ASSERT_EQ(std::set<int64_t>(all.begin(), all.end()).size(), 500u);
    it.start_next_epoch();
  }
  EXPECT_NE(epochs[0], epochs[1]);
  EXPECT_NE(epochs[1], epochs[2]);
}

TEST(EpochIterator, ResumesFromASavedPositionExactly) {
  const Sizes s = random_sizes(400, 30, 9);
  EpochIterator full(s.src, s.tgt, {200, 0, 1}, 7);
  full.start_next_epoch();  // epoch 2
  auto expected = drain_epoch(full);

  EpochIterator first(s.src, s.tgt, {200, 0, 1}, 7);
  first.start_next_epoch();
  std::vector<Batch> got;
  for (int k = 0; k < 5; ++k) got.push_back(first.next());
  EpochIterator resumed(s.src, s.tgt, {200, 0, 1}, 7, true, 0, 1, first.position());
  auto rest = drain_epoch(resumed);
  got.insert(got.end(), rest.begin(), rest.end());
  EXPECT_EQ(got, expected);

  EXPECT_THROW(EpochIterator(s.src, s.tgt, {200, 0, 1}, 7, true, 0, 1, {1, 100000}), Error);
}

TEST(EpochIterator, RanksSeeDisjointShardsOfTheSameEpoch) {
  const Sizes s = random_sizes(300, 30, 4);
  EpochIterator a(s.src, s.tgt, {128, 0, 1}, 3, true, 0, 2), b(s.src, s.tgt, {128, 0, 1}, 3, true, 1, 2);
  EXPECT_EQ(a.batches_in_epoch(), b.batches_in_epoch());
  std::set<int64_t> seen;
  for (auto* it : {&a, &b})
    for (const auto& batch : drain_epoch(*it))
      for (int64_t i : batch) ASSERT_TRUE(seen.insert(i).second);
  EXPECT_EQ(seen.size(), 300u);
}

TEST(Collate, RightPadsAndShiftsTargetsBehindEos) {
  const int64_t pad = 1, eos = 2;
  auto b = collate_pairs({4, 9}, {{10, 11, 2}, {12, 2}}, {{20, 2}, {21, 22, 23, 2}}, pad, eos);
  EXPECT_EQ(b.src_tokens.rows, 2);
  EXPECT_EQ(b.src_tokens.cols, 3);
  EXPECT_EQ(b.src_tokens.values, (std::vector<int64_t>{10, 11, 2, 12, 2, 1}));
  EXPECT_EQ(b.src_lengths, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(b.target.values, (std::vector<int64_t>{20, 2, 1, 1, 21, 22, 23, 2}));
  EXPECT_EQ(b.prev_output_tokens.values, (std::vector<int64_t>{2, 20, 1, 1, 2, 21, 22, 23}));
  EXPECT_EQ(b.ntokens, 6);
  EXPECT_EQ(b.nsentences(), 2);
}

}  // namespace
}  // namespace csan::data
