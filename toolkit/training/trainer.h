// One optimizer update over a group of micro-batches (update_freq), with the hook
// points fixed for mixed precision and data parallelism:
//   per micro-batch: forward + criterion -> precision.scale_loss -> backward
//   once per update: sync.all_reduce_grads -> precision.unscale_grads(1 / sample size)
//                    -> clip (the norm also detects overflow) -> optimizer step
// The epoch loop, validation scheduling and checkpoint policy live in train_loop.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "toolkit/checkpoint/checkpoint.h"
#include "toolkit/models/model.h"
#include "toolkit/training/criterion.h"
#include "toolkit/training/gradient_sync.h"
#include "toolkit/training/lr_scheduler.h"
#include "toolkit/training/precision.h"
#include "toolkit/training/weights_ema.h"

namespace csan::training {

// Sums over the micro-batches (and ranks) of one update or of a validation pass.
struct StepStats {
  double loss_sum = 0;  // nats
  double nll_sum = 0;   // nats
  int64_t ntokens = 0;
  int64_t nsentences = 0;
  int64_t sample_size = 0;
  void add(const CriterionOutput& out);
  void add(const StepStats& other);
  double loss_bits() const;  // per sample unit, base 2
  double nll_bits() const;   // per target token, base 2
  double ppl() const;
};

struct UpdateResult {
  StepStats stats;
  bool skipped = false;  // non-finite loss or gradients: no step taken
  double gnorm = 0;
  double lr = 0;
  double loss_scale = 0;  // after this update (fp16/amp); 0 without loss scaling
  int stop_signal = 0;    // SIGINT/SIGTERM received by any rank before this update's all-reduce
};

struct TrainerParts {
  std::shared_ptr<models::Model> model;
  std::unique_ptr<Criterion> criterion;
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  std::unique_ptr<LrScheduler> lr_scheduler;
  std::unique_ptr<PrecisionPolicy> precision;
  std::unique_ptr<GradientSync> sync;
  double clip_norm = 0;  // 0: no clipping (the norm is still computed and logged)
};

class Trainer {
 public:
  // parts.optimizer must have been built over parts.precision->optimizer_params() of the
  // (prepared) model's unique_parameters().
  explicit Trainer(TrainerParts parts);

  UpdateResult train_step(const std::vector<TensorBatch>& micro_batches);
  // Loss statistics without gradients, dropout off.
  StepStats valid_step(const TensorBatch& batch);

  int64_t num_updates() const { return num_updates_; }
  double current_lr() const { return parts_.lr_scheduler->lr_at(num_updates_ - lr_schedule_start_); }
  models::Model& model() { return *parts_.model; }
  const std::shared_ptr<models::Model>& shared_model() const { return parts_.model; }
  GradientSync& sync() { return *parts_.sync; }
  PrecisionPolicy& precision() { return *parts_.precision; }
  const std::vector<torch::Tensor>& params() const { return params_; }
  // Where the model computes; batches arrive on the CPU and are moved there.
  const torch::Device& device() const { return device_; }

  // Keeps an EMA of the weights from now on (ema.store_ema), updated after each update
  // and saved with the state.
  void enable_ema(const EmaOptions& options);
  const WeightsEma* ema() const { return ema_.get(); }

  // Model, optimizer, precision, EMA and RNG state into/out of a checkpoint; the update
  // count travels in TrainingProgress.
  void save_state(checkpoint::CheckpointWriter& writer) const;
  void load_state(checkpoint::CheckpointReader& reader) { load_state(reader, reader.progress(), {}); }
  // What a restart takes from the checkpoint besides the weights (and fp32 master weights).
  struct Restore {
    bool optimizer = true;  // false: fresh optimizer state (--reset-optimizer, fine-tuning)
    bool ema = true;        // false: the EMA restarts from the loaded weights (fine-tuning)
    bool rng = true;        // false: the recipe's seed goes on (fine-tuning)
  };
  // Continues at `progress` (the checkpoint's, or what a restart keeps of it).
  void load_state(checkpoint::CheckpointReader& reader, const checkpoint::TrainingProgress& progress,
                  const Restore& what);
  void set_num_updates(int64_t n) { num_updates_ = n; }

 private:
  TensorBatch on_device(const TensorBatch& batch) const;

  TrainerParts parts_;
  std::vector<torch::Tensor> params_;
  std::vector<torch::Tensor> optimizer_params_;  // params_ or their fp32 master copies
  torch::Device device_ = torch::kCPU;
  int64_t num_updates_ = 0;
  int64_t lr_schedule_start_ = 0;  // TrainingProgress::lr_schedule_start
  std::unique_ptr<WeightsEma> ema_;
};

}  // namespace csan::training
