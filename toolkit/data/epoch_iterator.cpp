#include "toolkit/data/epoch_iterator.h"

#include <algorithm>
#include <string>

#include "toolkit/core/error.h"

namespace csan::data {

namespace {
// Distinct, well-separated seeds per (seed, epoch, purpose) so that the example order
// and the batch order of different epochs are independent streams.
uint64_t mix(uint64_t seed, int64_t epoch, uint64_t purpose) {
  return seed * 0x9E3779B97F4A7C15ULL ^ (static_cast<uint64_t>(epoch) * 0xD1B54A32D192ED03ULL) ^
         (purpose * 0x8CB92BA72F3D8DD7ULL);
}
}  // namespace

EpochIterator::EpochIterator(std::vector<int32_t> src_sizes, std::vector<int32_t> tgt_sizes,
                             BatchingOptions options, uint64_t seed, bool shuffle, int rank,
                             int world_size, EpochPosition start)
    : src_sizes_(std::move(src_sizes)),
      tgt_sizes_(std::move(tgt_sizes)),
      options_(options),
      seed_(seed),
      shuffle_(shuffle),
      rank_(rank),
      world_size_(world_size),
      epoch_(start.epoch) {
  if (epoch_ < 1) throw Error("epoch iterator: epoch must be >= 1");
  build_epoch(start.next_batch);
}

EpochPosition EpochIterator::position() const {
  return {epoch_, std::min(epoch_batches_, shard_start_ + next_local_ * world_size_)};
}

void EpochIterator::build_epoch(int64_t first_global_batch) {
  // Without shuffling (validation) the order is fixed; with it, both the tie order
  // inside a length bucket and the order of batches change every epoch.
  const uint64_t order_seed = shuffle_ ? mix(seed_, epoch_, 1) : seed_;
  auto indices = ordered_indices(src_sizes_, tgt_sizes_, order_seed);
  auto batches = batch_by_size(indices, src_sizes_, tgt_sizes_, options_);
  if (shuffle_) deterministic_shuffle(batches, mix(seed_, epoch_, 2));
  epoch_batches_ = static_cast<int64_t>(batches.size());
  if (first_global_batch < 0 || first_global_batch > epoch_batches_)
    throw Error("epoch iterator: position " + std::to_string(first_global_batch) + " is outside epoch " +
                std::to_string(epoch_) + " (" + std::to_string(epoch_batches_) +
                " batches); was the data or batching changed?");
  batches.erase(batches.begin(), batches.begin() + first_global_batch);
  shard_ = shard_batches(batches, rank_, world_size_);
  shard_start_ = first_global_batch;
  next_local_ = 0;
}

const Batch& EpochIterator::next() {
  if (end_of_epoch()) throw Error("epoch iterator: no batch left in epoch " + std::to_string(epoch_));
  return shard_[next_local_++];
}

void EpochIterator::start_next_epoch() {
  ++epoch_;
  build_epoch(0);
}

}  // namespace csan::data
