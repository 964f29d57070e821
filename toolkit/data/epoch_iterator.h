// Walks the batches of one epoch after another, resumably. An epoch's batches are a
// pure function of (sizes, options, seed, epoch, rank, world size), so the iterator's
// whole state is two numbers: the epoch and the position inside it. Saving them in a
// checkpoint and constructing a new iterator from them continues exactly where the old
// one stopped.
#pragma once

#include <cstdint>
#include <vector>

#include "toolkit/data/batching.h"

namespace csan::data {

struct EpochPosition {
  int64_t epoch = 1;     // 1-based, like fairseq
  int64_t next_batch = 0;  // index of the next batch to hand out in this epoch
};

class EpochIterator {
 public:
  EpochIterator(std::vector<int32_t> src_sizes, std::vector<int32_t> tgt_sizes, BatchingOptions options,
                uint64_t seed, bool shuffle = true, int rank = 0, int world_size = 1,
                EpochPosition start = {});

  const EpochPosition& position() const { return position_; }
  int64_t epoch() const { return position_.epoch; }
  // Batches in the current epoch (this rank's shard, padding batches included).
  int64_t batches_in_epoch() const { return static_cast<int64_t>(batches_.size()); }
  bool end_of_epoch() const { return position_.next_batch >= batches_in_epoch(); }

  // The next batch of this epoch (may be empty: a padding batch of a short shard).
  // Precondition: !end_of_epoch().
  const Batch& next();
  // Moves to the first batch of the following epoch (reshuffled).
  void start_next_epoch();

 private:
  void build_epoch();

  std::vector<int32_t> src_sizes_, tgt_sizes_;
  BatchingOptions options_;
  uint64_t seed_;
  bool shuffle_;
  int rank_, world_size_;
  EpochPosition position_;
  std::vector<Batch> batches_;
};

}  // namespace csan::data
