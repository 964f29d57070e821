// What training reports: a live progress line on a terminal (epoch, update, loss, nll,
// ppl, lr, gnorm, target tokens/s, updates/s, ETA), plain "key value | ..." lines every
// log_interval updates when stderr is not a terminal, one JSON object per line in
// SAVE_DIR/metrics.jsonl for plotting (train lines, with the process's resident memory,
// and every validation, each with the task's name), and with a log dir, TensorBoard scalars in fairseq's layout and tag
// names (train_inner every log interval, train every epoch, one run per validation
// subset). A resumed run first drops what an earlier process logged after the
// checkpoint's update from both, so that each step appears once.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "toolkit/core/progress.h"
#include "toolkit/core/tensorboard_writer.h"
#include "toolkit/training/remaining_time.h"
#include "toolkit/training/trainer.h"

namespace csan::training {

// One record of metrics.jsonl (a train interval or a validation), as written there.
using TrainLogRecord = std::map<std::string, JsonLinesWriter::Value>;
// Called with every record as it is written (the Python package's csan.train on_log).
using TrainLogCallback = std::function<void(const TrainLogRecord&)>;

struct TrainLogOutputs {
  std::string metrics_path;           // "" writes no JSON
  std::string tensorboard_dir;        // "" writes no TensorBoard events
  std::string task;                   // the "task" of every metrics record
  std::optional<int64_t> resumed_at;  // the update count of the checkpoint resumed from
  TrainLogCallback on_record;         // empty: none
};

class TrainLog {
 public:
  // max_update 0 means no ETA. Files are opened by open_outputs, once the run starts.
  TrainLog(int64_t log_interval, int64_t max_update);

  // Opens (or, after a resume, truncates and appends to) the metrics file and the
  // TensorBoard log. Throws csan::Error naming a file or directory it cannot write.
  void open_outputs(const TrainLogOutputs& outputs);

  // A free-form line (start-up facts, warnings), never lost in the progress line.
  void info(const std::string& line);
  void update(int64_t epoch, int64_t num_updates, const UpdateResult& result);
  // `metrics`: the task's metrics beyond the loss (bleu, accuracy), in report order.
  void validation(int64_t epoch, int64_t num_updates, const std::string& subset, const StepStats& stats,
                  double best_metric, const std::string& metric_name, double metric,
                  const std::vector<std::pair<std::string, double>>& metrics = {});
  // The end of an epoch (complete: all its batches trained) or of the run.
  void end_epoch(int64_t epoch, int64_t num_updates, bool complete);
  // Data-parallel workers other than rank 0 print no info lines (their errors still do).
  void set_quiet(bool quiet) { quiet_ = quiet; }

 private:
  void flush_interval(int64_t epoch, int64_t num_updates);
  // The one place records go out: metrics.jsonl and the callback.
  void emit(TrainLogRecord record);

  std::unique_ptr<JsonLinesWriter> json_;
  std::unique_ptr<TensorboardWriter> tensorboard_;
  TrainLogCallback on_record_;
  std::string task_;
  int64_t log_interval_;
  int64_t max_update_;
  bool tty_;
  bool quiet_ = false;
  ProgressLine progress_;
  std::chrono::steady_clock::time_point interval_start_, run_start_, epoch_start_;
  int64_t start_update_ = -1;
  RemainingTime remaining_;  // the ETA, from the recent log intervals
  // Running sums since the last plain/JSON line, and since the epoch started.
  StepStats interval_, epoch_;
  double gnorm_sum_ = 0, lr_ = 0, epoch_gnorm_sum_ = 0;
  double loss_scale_ = 0;  // the latest (fp16/amp); 0: no loss scaling, not logged
  int64_t interval_updates_ = 0, interval_skipped_ = 0, epoch_updates_ = 0, epoch_skipped_ = 0;
};

// Drops the records of a metrics.jsonl whose "update" is after `last_kept_update`
// (rewriting the file atomically), and a last line cut short by a crash; returns how many
// it dropped. A missing file is fine; a malformed complete line is a csan::Error naming
// its line, and the file is left as it was.
size_t truncate_metrics(const std::string& path, int64_t last_kept_update);

}  // namespace csan::training
