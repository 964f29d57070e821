#include "toolkit/training/precision_master_weights.h"

#include <limits>

#include "toolkit/core/error.h"
#include "toolkit/training/optimizer.h"

namespace csan::training {

MasterWeightsPrecision::MasterWeightsPrecision(std::string name, torch::ScalarType model_dtype,
                                               std::optional<LossScalerOptions> scaler)
    : name_(std::move(name)), model_dtype_(model_dtype) {
  if (scaler) scaler_ = std::make_unique<DynamicLossScaler>(*scaler);
}

void MasterWeightsPrecision::prepare_model(torch::nn::Module& model) {
  const auto params = model.parameters();
  // fp16 kernels for training exist only on CUDA; bf16 (tests) runs anywhere.
  if (model_dtype_ == torch::kHalf && !params.empty() && !params.front().is_cuda())
    throw Error::for_key("common.precision", "'" + name_ + "' needs the model on a CUDA device; use --precision bf16");
  model.to(model_dtype_);
}

std::vector<torch::Tensor> MasterWeightsPrecision::optimizer_params(const std::vector<torch::Tensor>& model_params) {
  if (!masters_.empty()) {
    if (model_params.size() != model_params_.size())
      throw Error("precision " + name_ + ": the model's parameters changed after the master weights were built");
    return masters_;
  }
  torch::NoGradGuard no_grad;
  model_params_ = model_params;
  for (const auto& p : model_params) {
    if (p.scalar_type() != model_dtype_)
      throw Error("precision " + name_ + ": optimizer_params() called before prepare_model()");
    masters_.push_back(p.detach().to(torch::kFloat, /*non_blocking=*/false, /*copy=*/true).requires_grad_(true));
  }
  return masters_;
}

torch::Tensor MasterWeightsPrecision::scale_loss(const torch::Tensor& loss) {
  return scaler_ ? loss * scaler_->loss_scale() : loss;
}

void MasterWeightsPrecision::unscale_grads(const std::vector<torch::Tensor>& params, double multiplier) {
  if (params.size() != masters_.size())
    throw Error("precision " + name_ + ": unscale_grads() before optimizer_params() or with other parameters");
  torch::NoGradGuard no_grad;
  const double factor = scaler_ ? multiplier / scaler_->loss_scale() : multiplier;
  for (size_t i = 0; i < params.size(); ++i) {
    auto& master_grad = masters_[i].mutable_grad();
    const auto& grad = params[i].grad();
    if (!grad.defined()) {
      master_grad = torch::Tensor();
      continue;
    }
    // Unscaled in fp32: grad * factor would underflow or overflow in fp16.
    if (master_grad.defined())
      master_grad.copy_(grad);
    else
      master_grad = grad.to(torch::kFloat, false, /*copy=*/true);
    master_grad.mul_(factor);
    params[i].mutable_grad() = torch::Tensor();  // the next update accumulates from zero
  }
}

void MasterWeightsPrecision::after_update(bool overflow) {
  if (!scaler_) return;
  if (overflow)
    scaler_->check_overflow(std::numeric_limits<double>::infinity());
  else
    scaler_->update();
}

void MasterWeightsPrecision::after_step() {
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < masters_.size(); ++i) model_params_[i].copy_(masters_[i]);
}

void MasterWeightsPrecision::save(checkpoint::SectionWriter& section) const {
  if (scaler_) scaler_->save(section);
  for (size_t i = 0; i < masters_.size(); ++i) section.write("master." + std::to_string(i), masters_[i].detach());
}

void MasterWeightsPrecision::load(const checkpoint::SectionReader& section) {
  if (scaler_) scaler_->load(section);
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < masters_.size(); ++i) {
    torch::Tensor saved;
    // A checkpoint of another precision has no masters: they start from the model.
    if (!section.try_read("master." + std::to_string(i), saved)) {
      masters_[i].copy_(model_params_[i]);
      continue;
    }
    if (!saved.sizes().equals(masters_[i].sizes()))
      throw Error(section.where() + ": master weight " + std::to_string(i) + " has another shape than the model's");
    masters_[i].copy_(saved);
  }
}

}  // namespace csan::training
