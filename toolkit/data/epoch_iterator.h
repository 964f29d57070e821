// Walks the batches of one epoch after another, resumably. An epoch's batches are a
// pure function of (sizes, options, seed, epoch, rank, world size), so the iterator's
// whole state is two numbers: the epoch and the position inside it. Saving them in a
// checkpoint and constructing a new iterator from them continues exactly where the old
// one stopped. The position counts the epoch's batches consumed by ALL ranks together,
// so a checkpoint saved by N workers resumes with M: the remaining batches are sharded
// afresh over the new world size.
#pragma once

#include <cstdint>
#include <vector>

#include "toolkit/data/batching.h"

namespace csan::data {

struct EpochPosition {
  int64_t epoch = 1;     // 1-based, like fairseq
  int64_t next_batch = 0;  // batches of this epoch already taken, summed over ranks
};

class EpochIterator {
 public:
  EpochIterator(std::vector<int32_t> src_sizes, std::vector<int32_t> tgt_sizes, BatchingOptions options,
                uint64_t seed, bool shuffle = true, int rank = 0, int world_size = 1,
                EpochPosition start = {});

  // After k batches of this rank, every rank has taken k (in lockstep): the global
  // position is where this rank's shard started plus k * world size.
  EpochPosition position() const;
  int64_t epoch() const { return epoch_; }
  // This rank's batches in the current epoch from where it started (padding included).
  int64_t batches_in_epoch() const { return static_cast<int64_t>(shard_.size()); }
  bool end_of_epoch() const { return next_local_ >= batches_in_epoch(); }

  // The next batch of this epoch (may be empty: a padding batch of a short shard).
  // Precondition: !end_of_epoch().
  const Batch& next();
  // Moves to the first batch of the following epoch (reshuffled).
  void start_next_epoch();

 private:
  void build_epoch(int64_t first_global_batch);

  std::vector<int32_t> src_sizes_, tgt_sizes_;
  BatchingOptions options_;
  uint64_t seed_;
  bool shuffle_;
  int rank_, world_size_;
  int64_t epoch_;
  int64_t epoch_batches_ = 0;  // all ranks together
  int64_t shard_start_ = 0;    // global index this rank's shard starts from
  int64_t next_local_ = 0;     // index into shard_
  std::vector<Batch> shard_;
};

}  // namespace csan::data
