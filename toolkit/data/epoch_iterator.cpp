#include "toolkit/data/epoch_iterator.h"

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
      position_(start) {
  if (position_.epoch < 1) throw Error("epoch iterator: epoch must be >= 1");
  build_epoch();
  if (position_.next_batch < 0 || position_.next_batch > batches_in_epoch())
    throw Error("epoch iterator: position " + std::to_string(position_.next_batch) +
                " is outside epoch " + std::to_string(position_.epoch) + " (" +
                std::to_string(batches_in_epoch()) + " batches); was the data or batching changed?");
}

void EpochIterator::build_epoch() {
  // Without shuffling (validation) the order is fixed; with it, both the tie order
  // inside a length bucket and the order of batches change every epoch.
  const uint64_t order_seed = shuffle_ ? mix(seed_, position_.epoch, 1) : seed_;
  auto indices = ordered_indices(src_sizes_, tgt_sizes_, order_seed);
  auto batches = batch_by_size(indices, src_sizes_, tgt_sizes_, options_);
  if (shuffle_) deterministic_shuffle(batches, mix(seed_, position_.epoch, 2));
  batches_ = shard_batches(batches, rank_, world_size_);
}

const Batch& EpochIterator::next() {
  if (end_of_epoch()) throw Error("epoch iterator: no batch left in epoch " + std::to_string(position_.epoch));
  return batches_[position_.next_batch++];
}

void EpochIterator::start_next_epoch() {
  ++position_.epoch;
  position_.next_batch = 0;
  build_epoch();
}

}  // namespace csan::data
