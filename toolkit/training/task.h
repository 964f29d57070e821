// What the training loop asks of a task (fairseq's FairseqTask, training half). A task
// owns its data: it opens its dictionaries and splits, collates examples into batches of
// named tensors, says what its models need (the model context and family), picks its
// criterion and its validation metrics beyond the loss, and writes its data into
// checkpoints. run_training and the Trainer never name a batch field or a language.
// Implementations and their registry live in toolkit/tasks/ (they also serve
// csan-generate and checkpoint loading, which sit above training).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "toolkit/checkpoint/checkpoint.h"
#include "toolkit/core/config.h"
#include "toolkit/data/batching.h"
#include "toolkit/models/model.h"
#include "toolkit/models/model_context.h"
#include "toolkit/training/criterion.h"
#include "toolkit/training/tensor_batch.h"

namespace csan::training {

// One split of a task's data.
class TaskDataset {
 public:
  virtual ~TaskDataset() = default;
  virtual size_t size() const = 0;
  // Lengths for length-bucketed batching (fairseq's source and target sizes; a task with
  // one sequence per example gives the same lengths twice).
  virtual const std::vector<int32_t>& source_sizes() const = 0;
  virtual const std::vector<int32_t>& target_sizes() const = 0;
  virtual TensorBatch collate(const data::Batch& batch) const = 0;
};

// A validation metric beyond the loss (BLEU, tagging accuracy), computed from statistics
// that data-parallel ranks sum: each rank gets the statistics of its shard of the
// validation batches, the loop sums them over ranks and asks for the values of the sums.
class Validator {
 public:
  virtual ~Validator() = default;
  virtual std::vector<double> statistics(models::Model& model, const std::vector<data::Batch>& batches) = 0;
  // name -> value for every metric of metrics().
  virtual std::vector<std::pair<std::string, double>> values(const std::vector<double>& sums) const = 0;
};

struct MetricSpec {
  std::string name;  // as in checkpoint.best_checkpoint_metric and metrics.jsonl
  bool higher_is_better = false;
};

class Task {
 public:
  virtual ~Task() = default;
  virtual std::string name() const = 0;
  // The family its models must have (models::kEncoderDecoder, models::kTagging).
  virtual std::string model_family() const = 0;
  virtual models::ModelContext model_context() const = 0;
  // The task's data for checkpoints (dictionaries, ...); run_training adds the recipe.
  virtual checkpoint::CheckpointMeta checkpoint_meta() const = 0;
  // Throws a one-line csan::Error when a checkpoint's data does not fit this run's
  // (other dictionaries, other languages): resuming would mix two datasets.
  virtual void check_resume(const checkpoint::CheckpointMeta& saved, const std::string& checkpoint_path) const = 0;
  // Recipe keys whose values are compared through the data instead (e.g. language
  // suffixes that the recipe may leave empty and the data directory then decides).
  virtual std::vector<std::string> keys_checked_through_data() const { return {}; }

  virtual const TaskDataset& train_data() const = 0;
  virtual const TaskDataset* valid_data() const = 0;  // null: no validation split
  virtual std::string valid_subset() const = 0;
  virtual std::unique_ptr<Criterion> criterion(const core::Config& cfg) const = 0;
  // Metrics beyond loss and nll_loss that validation reports with this recipe.
  virtual std::vector<MetricSpec> metrics() const { return {}; }
  // The validator of metrics(), built once per run (null when metrics() is empty).
  // `log` prints a line on rank 0 (sample translations).
  virtual std::unique_ptr<Validator> validator(std::function<void(const std::string&)> log) const {
    (void)log;
    return nullptr;
  }
  // One line for the start-up log: what was read ("data D (en -> de): N pairs, ...").
  virtual std::string describe() const = 0;
};

}  // namespace csan::training
