// fp32 weights with the forward pass under autocast: bf16 (CPU or CUDA, no loss
// scaling) or amp (fp16 on CUDA with a dynamic loss scaler). The optimizer works on the
// model's own fp32 parameters and gradients.
#pragma once

#include <memory>
#include <optional>

#include "toolkit/training/loss_scaler.h"
#include "toolkit/training/precision.h"

namespace csan::training {

class AutocastPrecision : public PrecisionPolicy {
 public:
  AutocastPrecision(std::string name, torch::ScalarType dtype, std::optional<LossScalerOptions> scaler);

  std::string name() const override { return name_; }
  // Autocast runs on the device the model's parameters live on.
  void prepare_model(torch::nn::Module& model) override;
  AutocastSpec autocast() const override { return spec_; }
  torch::Tensor scale_loss(const torch::Tensor& loss) override;
  void unscale_grads(const std::vector<torch::Tensor>& params, double multiplier) override;
  void after_update(bool overflow) override;
  bool scales_loss() const override { return scaler_ != nullptr; }
  double loss_scale() const override { return scaler_ ? scaler_->loss_scale() : 1.0; }
  void save(checkpoint::SectionWriter& section) const override;
  void load(const checkpoint::SectionReader& section) override;

 private:
  std::string name_;
  AutocastSpec spec_;
  std::unique_ptr<DynamicLossScaler> scaler_;
};

}  // namespace csan::training
