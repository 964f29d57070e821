#include "toolkit/data/batching.h"

#include <algorithm>
#include <numeric>
#include <string>

#include "toolkit/core/error.h"
#include "toolkit/core/splitmix64.h"

namespace csan::data {

namespace {

template <typename T>
void shuffle_with(std::vector<T>& values, uint64_t seed) {
  core::SplitMix64 rng(seed);
  for (size_t i = values.size(); i > 1; --i) std::swap(values[i - 1], values[rng.below(i)]);
}

}  // namespace

void deterministic_shuffle(std::vector<int64_t>& values, uint64_t seed) { shuffle_with(values, seed); }
void deterministic_shuffle(std::vector<Batch>& batches, uint64_t seed) { shuffle_with(batches, seed); }

std::vector<int64_t> ordered_indices(const std::vector<int32_t>& src_sizes, const std::vector<int32_t>& tgt_sizes,
                                     uint64_t seed) {
  if (src_sizes.size() != tgt_sizes.size())
    throw Error("source and target datasets differ in size: " + std::to_string(src_sizes.size()) + " vs " +
                std::to_string(tgt_sizes.size()) + " sentences");
  std::vector<int64_t> indices(src_sizes.size());
  std::iota(indices.begin(), indices.end(), 0);
  deterministic_shuffle(indices, seed);
  std::stable_sort(indices.begin(), indices.end(), [&](int64_t a, int64_t b) { return tgt_sizes[a] < tgt_sizes[b]; });
  std::stable_sort(indices.begin(), indices.end(), [&](int64_t a, int64_t b) { return src_sizes[a] < src_sizes[b]; });
  return indices;
}

std::vector<Batch> batch_by_size(const std::vector<int64_t>& indices, const std::vector<int32_t>& src_sizes,
                                 const std::vector<int32_t>& tgt_sizes, const BatchingOptions& options) {
  if (options.max_tokens < 0) throw Error::for_key("max_tokens", "must be >= 0");
  if (options.max_sentences < 0) throw Error::for_key("max_sentences", "must be >= 0");
  if (options.required_batch_size_multiple < 1) throw Error::for_key("required_batch_size_multiple", "must be >= 1");
  const int64_t max_tokens = options.max_tokens > 0 ? options.max_tokens : INT64_MAX;
  const int64_t max_sentences = options.max_sentences > 0 ? options.max_sentences : INT64_MAX;
  const int64_t multiple = options.required_batch_size_multiple;

  std::vector<Batch> batches;
  Batch batch;
  std::vector<int64_t> lengths;  // cost of each example in `batch`
  int64_t longest = 0;
  for (int64_t index : indices) {
    const int64_t cost = std::max(src_sizes.at(index), tgt_sizes.at(index));
    if (cost > max_tokens)
      throw Error("sentence " + std::to_string(index) + " has " + std::to_string(cost) +
                  " tokens, more than max_tokens " + std::to_string(options.max_tokens) +
                  " (raise max_tokens or filter long sentences)");
    // A loop, not an if: the examples carried over may still be too many for `cost`.
    while (!batch.empty()) {
      const int64_t size = static_cast<int64_t>(batch.size());
      if (size < max_sentences && (size + 1) * std::max(longest, cost) <= max_tokens) break;
      // Emit the largest multiple-of-`multiple` prefix (or everything if smaller) and
      // carry the rest over, as fairseq does.
      const int64_t keep = std::max(multiple * (size / multiple), size % multiple);
      batches.emplace_back(batch.begin(), batch.begin() + keep);
      batch.erase(batch.begin(), batch.begin() + keep);
      lengths.erase(lengths.begin(), lengths.begin() + keep);
      longest = lengths.empty() ? 0 : *std::max_element(lengths.begin(), lengths.end());
    }
    batch.push_back(index);
    lengths.push_back(cost);
    longest = std::max(longest, cost);
  }
  if (!batch.empty()) batches.push_back(std::move(batch));
  return batches;
}

std::vector<Batch> shard_batches(const std::vector<Batch>& batches, int rank, int world_size) {
  if (world_size < 1 || rank < 0 || rank >= world_size)
    throw Error("invalid shard: rank " + std::to_string(rank) + " of world size " + std::to_string(world_size));
  const size_t per_rank = (batches.size() + world_size - 1) / world_size;
  std::vector<Batch> shard;
  shard.reserve(per_rank);
  for (size_t k = 0; k < per_rank; ++k) {
    const size_t i = k * world_size + rank;
    shard.push_back(i < batches.size() ? batches[i] : Batch{});
  }
  return shard;
}

}  // namespace csan::data
