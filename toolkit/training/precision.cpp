#include "toolkit/training/precision.h"

#include "toolkit/core/cpu_flags.h"
#include "toolkit/core/error.h"
#include "toolkit/training/optimizer.h"
#include "toolkit/training/precision_autocast.h"
#include "toolkit/training/precision_master_weights.h"
#include "toolkit/training/training_options.h"

namespace csan::training {

namespace {

void require_cuda(const std::string& name) {
  if (!torch::cuda::is_available())
    throw Error::for_key("common.precision", "'" + name +
                                                 "' needs a CUDA GPU and none is available; use --precision bf16 "
                                                 "(bf16 autocast, fast on CPUs with AVX-512 BF16)");
}

std::unique_ptr<PrecisionPolicy> make_policy(TrainingPrecision precision, const LossScalerOptions& scaler) {
  const std::string name = training_precision_name(precision);
  switch (precision) {
    case TrainingPrecision::fp32:
      return std::make_unique<Fp32Precision>();
    case TrainingPrecision::bf16:
      return std::make_unique<AutocastPrecision>(name, torch::kBFloat16, std::nullopt);
    case TrainingPrecision::amp:
      require_cuda(name);
      return std::make_unique<AutocastPrecision>(name, torch::kHalf, scaler);
    case TrainingPrecision::fp16:
      require_cuda(name);
      return std::make_unique<MasterWeightsPrecision>(name, torch::kHalf, scaler);
  }
  throw Error("internal: a training precision without a policy");
}

std::string known_training_precisions() {
  std::string names;
  for (const TrainingPrecision p : kTrainingPrecisions)
    names += (names.empty() ? "" : ", ") + std::string(training_precision_name(p));
  return names;
}

}  // namespace

const char* training_precision_name(TrainingPrecision precision) {
  switch (precision) {
    case TrainingPrecision::fp32:
      return "fp32";
    case TrainingPrecision::fp16:
      return "fp16";
    case TrainingPrecision::bf16:
      return "bf16";
    case TrainingPrecision::amp:
      return "amp";
  }
  throw Error("internal: a training precision without a name");
}

TrainingPrecision parse_training_precision(const std::string& name) {
  for (const TrainingPrecision p : kTrainingPrecisions)
    if (name == training_precision_name(p)) return p;
  throw Error::for_key("common.precision", "unknown precision '" + name + "' (" + known_training_precisions() + ")");
}

void PrecisionPolicy::unscale_grads(const std::vector<torch::Tensor>& params, double multiplier) {
  multiply_grads(params, multiplier);
}

void declare_precision_options(core::ConfigSchema& s) {
  std::vector<std::string> names;
  for (const TrainingPrecision p : kTrainingPrecisions) names.push_back(training_precision_name(p));
  s.add_string("common.precision", training_precision_name(TrainingPrecision::fp32),
               "numeric precision: fp32; bf16 (autocast, CPU or GPU); fp16 (fp16 model + fp32 master weights, "
               "loss scaling, CUDA); amp (fp16 autocast + loss scaling, CUDA)",
               names);
  s.add_double("common.fp16_init_scale", 128.0, "initial loss scale (fp16, amp)", 1e-30, kMaxFloatOption);
  s.add_int("common.fp16_scale_window", std::nullopt,
            "clean updates before the loss scale doubles (default: 2^14 / world size / update_freq)", 1);
  s.add_double("common.fp16_scale_tolerance", 0.0,
               "share of overflowing updates since the last rescale tolerated before halving the scale", 0.0, 1.0);
  s.add_double("common.min_loss_scale", 1e-4, "stop with an error when the loss scale falls to this", 0.0);
  s.add_double("common.threshold_loss_scale", std::nullopt, "the loss scale never drops below this", 0.0);
}

LossScalerOptions loss_scaler_options(const core::Config& cfg, int64_t data_parallel_size) {
  LossScalerOptions scaler;
  scaler.init_scale = cfg.get<double>("common.fp16_init_scale");
  if (cfg.has("common.fp16_scale_window")) {
    scaler.scale_window = cfg.get<int64_t>("common.fp16_scale_window");
  } else {
    const int64_t update_freq = cfg.has("optimization.update_freq") ? cfg.get<int64_t>("optimization.update_freq") : 1;
    scaler.scale_window = std::max<int64_t>(
        1, (int64_t{1} << 14) / std::max<int64_t>(1, data_parallel_size) / std::max<int64_t>(1, update_freq));
  }
  scaler.tolerance = cfg.get<double>("common.fp16_scale_tolerance");
  scaler.min_loss_scale = cfg.get<double>("common.min_loss_scale");
  if (cfg.has("common.threshold_loss_scale")) scaler.threshold = cfg.get<double>("common.threshold_loss_scale");
  return scaler;
}

std::unique_ptr<PrecisionPolicy> make_precision_policy(const core::Config& cfg, int64_t data_parallel_size) {
  return make_policy(parse_training_precision(cfg.get<std::string>("common.precision")),
                     loss_scaler_options(cfg, data_parallel_size));
}

std::unique_ptr<PrecisionPolicy> make_precision_policy(TrainingPrecision precision) {
  LossScalerOptions scaler;
  scaler.scale_window = int64_t{1} << 14;
  return make_policy(precision, scaler);
}

std::unique_ptr<PrecisionPolicy> make_precision_policy(const std::string& name) {
  return make_precision_policy(parse_training_precision(name));
}

bool cpu_has_native_bf16() { return core::cpu_has("avx512_bf16") || core::cpu_has("amx_bf16"); }

std::string precision_speed_warning(TrainingPrecision precision, const torch::Device& device, bool native_bf16) {
  if (!device.is_cpu()) return "";
  if (precision == TrainingPrecision::bf16 && !native_bf16)
    return "warning: precision bf16 on a CPU without AVX512-BF16 or AMX: LibTorch emulates bf16 matrix products "
           "here, much slower than fp32 (use --precision fp32 on this machine)";
  if (precision == TrainingPrecision::fp32 && native_bf16)
    return "hint: this CPU has bf16 matrix instructions: --precision bf16 trained 1.4x to 2.7x faster than fp32 "
           "on such CPUs (docs/csan-train.md, \"Precision on CPU\")";
  return "";
}

std::string precision_speed_warning(const std::string& precision, const torch::Device& device) {
  return precision_speed_warning(parse_training_precision(precision), device, cpu_has_native_bf16());
}

}  // namespace csan::training
