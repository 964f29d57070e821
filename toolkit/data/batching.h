// Length-bucketed batching with fairseq's semantics: examples are shuffled from the
// seed, then stably sorted by (source length, target length) so that a batch holds
// sentences of similar length (little padding), then cut greedily so that a batch's
// padded size (sentences x longest example) never exceeds max_tokens and it holds at
// most max_sentences sentences. Torch-free: a batch is a list of example indices.
#pragma once

#include <cstdint>
#include <vector>

namespace csan::data {

using Batch = std::vector<int64_t>;

struct BatchingOptions {
  int64_t max_tokens = 0;     // 0: no limit
  int64_t max_sentences = 0;  // 0: no limit
  // Batch sizes are rounded down to a multiple of this when possible (fairseq's
  // --required-batch-size-multiple; tensor cores like multiples of 8).
  int64_t required_batch_size_multiple = 1;
};

// Shuffles 0..n-1 with `seed`, then stable-sorts by target and then source length
// (the same two-pass order as fairseq's LanguagePairDataset.ordered_indices).
std::vector<int64_t> ordered_indices(const std::vector<int32_t>& src_sizes,
                                     const std::vector<int32_t>& tgt_sizes, uint64_t seed);

// Greedily groups `indices` (in order) into batches. The cost of an example is
// max(src, tgt) length. Throws csan::Error if one example alone exceeds max_tokens.
std::vector<Batch> batch_by_size(const std::vector<int64_t>& indices,
                                 const std::vector<int32_t>& src_sizes,
                                 const std::vector<int32_t>& tgt_sizes,
                                 const BatchingOptions& options);

// Deterministic in-place shuffle (Fisher-Yates over a splitmix64 stream), identical on
// every platform, unlike std::shuffle whose algorithm is implementation-defined.
void deterministic_shuffle(std::vector<int64_t>& values, uint64_t seed);
void deterministic_shuffle(std::vector<Batch>& batches, uint64_t seed);

// Rank `rank` of `world_size` takes batches rank, rank + world_size, ...; shorter shards
// are padded with empty batches so every rank runs the same number of steps (the
// distributed trainer needs all ranks to reach each all-reduce together).
std::vector<Batch> shard_batches(const std::vector<Batch>& batches, int rank, int world_size);

}  // namespace csan::data
