#include "toolkit/training/precision_autocast.h"

#include <limits>

#include "toolkit/core/error.h"
#include "toolkit/training/optimizer.h"

namespace csan::training {

AutocastPrecision::AutocastPrecision(std::string name, torch::ScalarType dtype, std::optional<LossScalerOptions> scaler)
    : name_(std::move(name)) {
  spec_.enabled = true;
  spec_.dtype = dtype;
  spec_.device = dtype == torch::kHalf ? torch::kCUDA : torch::kCPU;
  if (scaler) scaler_ = std::make_unique<DynamicLossScaler>(*scaler);
}

void AutocastPrecision::prepare_model(torch::nn::Module& model) {
  const auto params = model.parameters();
  if (!params.empty()) spec_.device = params.front().device().type();
  if (spec_.dtype == torch::kHalf && spec_.device != torch::kCUDA)
    throw Error::for_key("common.precision", "'" + name_ + "' needs the model on a CUDA device; use --precision bf16");
}

torch::Tensor AutocastPrecision::scale_loss(const torch::Tensor& loss) {
  return scaler_ ? loss * scaler_->loss_scale() : loss;
}

void AutocastPrecision::unscale_grads(const std::vector<torch::Tensor>& params, double multiplier) {
  multiply_grads(params, scaler_ ? multiplier / scaler_->loss_scale() : multiplier);
}

void AutocastPrecision::after_update(bool overflow) {
  if (!scaler_) return;
  if (overflow)
    scaler_->check_overflow(std::numeric_limits<double>::infinity());
  else
    scaler_->update();
}

void AutocastPrecision::save(checkpoint::SectionWriter& section) const {
  if (scaler_) scaler_->save(section);
}

void AutocastPrecision::load(const checkpoint::SectionReader& section) {
  if (scaler_) scaler_->load(section);
}

}  // namespace csan::training
