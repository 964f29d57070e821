// TensorBoard scalars in fairseq's layout (--tensorboard-logdir): one TensorBoard run per
// split, LOG_DIR/<split>/events.out.tfevents.<seconds>.<host>.<pid>.<n>, each file a
// TFRecord stream of Events: file_version "brain.Event:2" first, then one Event per
// logged record (wall_time, step, a Summary of simple_value scalars).
//
// fairseq's splits and tags (fairseq_cli/train.py, trainer.py, progress_bar.py), step =
// number of updates:
//   train_inner  every log interval: loss, nll_loss, ppl, wps, ups, wpb, bsz, lr, gnorm,
//                clip, loss_scale, train_wall, gb_free, wall
//   train        end of epoch: the same, over the epoch
//   valid        (one run per validation subset, named after it): loss, nll_loss, ppl, wps,
//                wpb, bsz, best_loss (best_<metric>), bleu with --eval-bleu
// Losses are in bits per token, as in fairseq. Only rank 0 should write; not thread-safe.
//
// Resuming (TensorBoard's semantics, checked in its sources): the Python reader keeps
// out-of-order steps of a file_version-2 run and only purges on a SessionLog START (all
// events with step >= START's step); the Rust data server (--load_fast) drops, per tag,
// the points whose step is >= a newly read point's. Neither removes a stale point the
// restarted run never logs again (e.g. a validation the crashed run did after its last
// checkpoint), so a resuming writer deletes such events from the files itself.
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "toolkit/core/tensorboard_event.h"

namespace csan {

class TensorboardWriter {
 public:
  // Creates LOG_DIR (and parents) and checks that files can be created in it; throws
  // csan::Error naming it otherwise. resume_step: this run continues from a checkpoint
  // taken at that update; every event an earlier process logged after it, in any split,
  // is removed first (truncate_tensorboard_events), and each new file starts with a
  // SessionLog START at resume_step + 1 for a TensorBoard that had already loaded them.
  // nullopt leaves existing files alone (fairseq's behaviour).
  explicit TensorboardWriter(std::string log_dir, std::optional<int64_t> resume_step = std::nullopt);
  ~TensorboardWriter();
  TensorboardWriter(const TensorboardWriter&) = delete;
  TensorboardWriter& operator=(const TensorboardWriter&) = delete;

  // Appends one Event at `step` to LOG_DIR/<split>/ (its file is created on first use,
  // named to sort after the split's existing files, as TensorBoard reads them in name
  // order) and flushes it, so that a running TensorBoard sees it at once.
  void add_scalars(const std::string& split, int64_t step, const std::vector<TensorboardScalar>& scalars);

  const std::string& log_dir() const { return log_dir_; }

 private:
  std::FILE* file_for(const std::string& split);
  void append(const std::string& split, std::FILE* file, const std::string& event);

  std::string log_dir_;
  std::optional<int64_t> resume_step_;
  std::map<std::string, std::FILE*> files_;
  std::map<std::string, std::string> paths_;
};

// Removes every event with a step after last_kept_step from the event files in
// LOG_DIR's split folders, rewriting each changed file atomically (a partial record left
// by a crash is dropped too). Returns how many events were removed. A corrupt file (CRC
// mismatch, a record that is not an Event) is an error naming it and the byte offset.
size_t truncate_tensorboard_events(const std::string& log_dir, int64_t last_kept_step);

}  // namespace csan
