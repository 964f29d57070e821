// Numeric precision of training: the trainer calls these hooks at fixed points of an
// update (scale loss -> backward -> all-reduce -> unscale/check overflow -> clip -> step).
// This file holds the interface and the fp32 policy; the mixed-precision issue adds fp16
// (fp32 master weights + dynamic loss scaling), amp and bf16 as further policies.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <torch/torch.h>

namespace csan::training {

class PrecisionPolicy {
 public:
  virtual ~PrecisionPolicy() = default;
  virtual std::string name() const = 0;
  // Prepares the model (casts weights) before the optimizer is built.
  virtual void prepare_model(torch::nn::Module& model) { (void)model; }
  // The tensor to call backward() on for a micro-batch loss.
  virtual torch::Tensor scale_loss(const torch::Tensor& loss) { return loss; }
  // Folds the inverse loss scale into `multiplier` (the 1/sample_size normalization)
  // and applies it to the gradients. Overflow is detected afterwards by the trainer from
  // the gradient norm (one reduction instead of a check per tensor).
  virtual void unscale_grads(const std::vector<torch::Tensor>& params, double multiplier);
  // Called after each update attempt (a loss scaler grows or shrinks its scale here).
  virtual void after_update(bool overflow) { (void)overflow; }
  // Reported in logs (the loss scale for fp16); 1 for fp32.
  virtual double loss_scale() const { return 1.0; }
  // Checkpointed state (loss scale and counters); fp32 has none.
  virtual void save(torch::serialize::OutputArchive& archive) const { (void)archive; }
  virtual void load(torch::serialize::InputArchive& archive) { (void)archive; }
};

class Fp32Precision : public PrecisionPolicy {
 public:
  std::string name() const override { return "fp32"; }
};

// "fp32" for now; unknown or not-yet-supported names are a clear error.
std::unique_ptr<PrecisionPolicy> make_precision_policy(const std::string& name);

}  // namespace csan::training
