// Validation as the training loop runs it: the loss over this rank's shard of the
// validation batches and the task's metrics (BLEU, accuracy), summed over ranks, and the
// metric that selects checkpoint_best.pt and drives patience
// (checkpoint.best_checkpoint_metric: loss, nll_loss or one the task reports).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "toolkit/checkpoint/checkpoint.h"
#include "toolkit/core/config.h"
#include "toolkit/training/task.h"
#include "toolkit/training/trainer.h"

namespace csan::training {

struct ValidationResult {
  StepStats stats;
  std::vector<std::pair<std::string, double>> metrics;  // the task's, beyond the loss
  double metric = 0;                                    // the best-checkpoint metric's value
};

class ValidationRun {
 public:
  // Throws csan::Error naming checkpoint.best_checkpoint_metric for a metric this run
  // does not report. `valid` may be null (no validation). `log` prints on rank 0.
  ValidationRun(const core::Config& cfg, const Task& task, const TaskDataset* valid, int rank, int world_size,
                std::function<void(const std::string&)> log);
  // Builds the task's validator (a task's metrics may load models, e.g. SentencePiece).
  void start();

  bool enabled() const { return valid_ != nullptr; }
  const MetricSpec& best_metric() const { return best_; }
  // Validates on every rank (they all-reduce together).
  ValidationResult run(Trainer& trainer) const;
  // Records `metric` in progress (best value, validations without improvement);
  // returns whether it improved.
  bool record(double metric, checkpoint::TrainingProgress& progress) const;

 private:
  const Task& task_;
  const TaskDataset* valid_;
  MetricSpec best_;
  std::vector<data::Batch> batches_;  // this rank's shard
  std::function<void(const std::string&)> log_;
  std::unique_ptr<Validator> validator_;
};

}  // namespace csan::training
