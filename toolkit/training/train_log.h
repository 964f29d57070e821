// What training reports: a live progress line on a terminal (epoch, update, loss, nll,
// ppl, lr, gnorm, target tokens/s, updates/s, ETA), plain "key value | ..." lines every
// log_interval updates when stderr is not a terminal, and one JSON object per line in
// SAVE_DIR/metrics.jsonl for plotting (train lines and every validation).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "toolkit/core/progress.h"
#include "toolkit/training/trainer.h"

namespace csan::training {

class TrainLog {
 public:
  // metrics_path "" writes no JSON; max_update 0 means no ETA.
  TrainLog(const std::string& metrics_path, int64_t log_interval, int64_t max_update);

  // A free-form line (start-up facts, warnings), never lost in the progress line.
  void info(const std::string& line);
  void update(int64_t epoch, int64_t num_updates, const UpdateResult& result);
  // `metrics`: the task's metrics beyond the loss (bleu, accuracy), in report order.
  void validation(int64_t epoch, int64_t num_updates, const std::string& subset, const StepStats& stats,
                  double best_metric, const std::string& metric_name, double metric,
                  const std::vector<std::pair<std::string, double>>& metrics = {});
  void end_epoch(int64_t epoch);
  // Data-parallel workers other than rank 0 print no info lines (their errors still do).
  void set_quiet(bool quiet) { quiet_ = quiet; }

 private:
  void flush_interval(int64_t epoch, int64_t num_updates);

  std::unique_ptr<JsonLinesWriter> json_;
  int64_t log_interval_;
  int64_t max_update_;
  bool tty_;
  bool quiet_ = false;
  ProgressLine progress_;
  std::chrono::steady_clock::time_point interval_start_, run_start_;
  int64_t start_update_ = -1;
  // Running sums since the last plain/JSON line.
  StepStats interval_;
  double gnorm_sum_ = 0, lr_ = 0;
  double loss_scale_ = 0;  // the latest (fp16/amp); 0: no loss scaling, not logged
  int64_t interval_updates_ = 0, interval_skipped_ = 0;
};

}  // namespace csan::training
