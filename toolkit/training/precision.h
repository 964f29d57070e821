// Numeric precision of training: the trainer calls these hooks at fixed points of an
// update (scale loss -> backward -> all-reduce -> unscale/check overflow -> clip -> step
// -> after_step), runs forward passes inside the policy's autocast scope, and builds the
// optimizer over optimizer_params(). Policies (common.precision):
//   fp32  plain fp32
//   bf16  fp32 weights, bf16 autocast (CPU or CUDA), no loss scaling
//   amp   fp32 weights, fp16 autocast (CUDA), dynamic loss scaling
//   fp16  fp16 model, fp32 master weights in the optimizer, dynamic loss scaling (CUDA)
#pragma once

#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "toolkit/core/config.h"
#include "toolkit/training/autocast_guard.h"
#include "toolkit/training/loss_scaler.h"

namespace csan::training {

// common.precision (mixed-precision training; decoding's precisions are nn::Precision),
// named here and parsed once: the rest of training uses the enum.
enum class TrainingPrecision { fp32, fp16, bf16, amp };
constexpr TrainingPrecision kTrainingPrecisions[] = {TrainingPrecision::fp32, TrainingPrecision::fp16,
                                                     TrainingPrecision::bf16, TrainingPrecision::amp};
const char* training_precision_name(TrainingPrecision precision);
// Throws csan::Error for common.precision: "unknown precision 'x' (fp32, fp16, bf16, amp)".
TrainingPrecision parse_training_precision(const std::string& name);

class PrecisionPolicy {
 public:
  virtual ~PrecisionPolicy() = default;
  virtual std::string name() const = 0;
  // Prepares the model (casts weights) before the optimizer is built.
  virtual void prepare_model(torch::nn::Module& model) { (void)model; }
  // The tensors the optimizer updates, given the model's distinct parameters after
  // prepare_model: the parameters themselves, or fp32 master copies (created on the
  // first call; later calls return the same tensors).
  virtual std::vector<torch::Tensor> optimizer_params(const std::vector<torch::Tensor>& model_params) {
    return model_params;
  }
  // The forward precision (autocast) for train and valid steps.
  virtual AutocastSpec autocast() const { return {}; }
  // The tensor to call backward() on for a micro-batch loss.
  virtual torch::Tensor scale_loss(const torch::Tensor& loss) { return loss; }
  // Folds the inverse loss scale into `multiplier` (the 1/sample_size normalization)
  // and applies it to the gradients of optimizer_params() (copying them there from the
  // model's when they differ). Overflow is detected afterwards by the trainer from the
  // gradient norm (one reduction instead of a check per tensor).
  virtual void unscale_grads(const std::vector<torch::Tensor>& params, double multiplier);
  // Called after each update attempt with whether its gradients overflowed (a loss
  // scaler halves or grows its scale here, and throws when it reaches its minimum).
  virtual void after_update(bool overflow) { (void)overflow; }
  // Called after the optimizer step (master weights are copied into the model here).
  virtual void after_step() {}
  // True when overflowing updates are expected and handled (loss scaling): the trainer
  // then does not count them as a run of non-finite losses.
  virtual bool scales_loss() const { return false; }
  // Reported in logs (the loss scale for fp16/amp); 1 without loss scaling.
  virtual double loss_scale() const { return 1.0; }
  // Checkpointed state (loss scale and counters, fp32 master weights); fp32 has none.
  virtual void save(checkpoint::SectionWriter& section) const { (void)section; }
  virtual void load(const checkpoint::SectionReader& section) { (void)section; }
};

class Fp32Precision : public PrecisionPolicy {
 public:
  std::string name() const override { return "fp32"; }
};

// common.precision and the loss-scaler keys (fp16_init_scale, fp16_scale_window, ...).
void declare_precision_options(core::ConfigSchema& schema);

// The loss-scaler options of cfg (common.fp16_*): when fp16_scale_window is unset, the
// window is fairseq's 2^14 / data_parallel_size / update_freq.
LossScalerOptions loss_scaler_options(const core::Config& cfg, int64_t data_parallel_size = 1);

// The policy of cfg's common.precision. data_parallel_size and update_freq set the
// default scale window as fairseq does (2^14 / world size / update_freq). fp16 and amp
// need CUDA: without it, a clear error suggesting bf16.
std::unique_ptr<PrecisionPolicy> make_precision_policy(const core::Config& cfg, int64_t data_parallel_size = 1);
// With default scaler options (tests, benchmarks).
std::unique_ptr<PrecisionPolicy> make_precision_policy(TrainingPrecision precision);
std::unique_ptr<PrecisionPolicy> make_precision_policy(const std::string& name);

// True when this CPU has bf16 matrix instructions (AVX512-BF16 or AMX-BF16), which
// LibTorch's oneDNN kernels need to run bf16 products faster than fp32.
bool cpu_has_native_bf16();
// One line on the precision's speed where the model runs, or "": a warning for bf16 on a
// CPU without native bf16, where LibTorch emulates bf16 products (about 25x slower than
// fp32 on the machines this was measured on), and a hint for fp32 on a CPU with it, where
// bf16 trains 2.2-2.7x faster (README, "Precision on CPU").
std::string precision_speed_warning(TrainingPrecision precision, const torch::Device& device, bool native_bf16);
// The same for this CPU, and common.precision's value (parsed by parse_training_precision).
std::string precision_speed_warning(const std::string& precision, const torch::Device& device);

}  // namespace csan::training
