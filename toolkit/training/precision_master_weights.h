// Low-precision model + fp32 master weights (fairseq's --fp16 scheme), generic over the
// model's dtype so that it is testable on CPU with bfloat16: the model's parameters are
// cast to `model_dtype`; the optimizer updates fp32 copies; gradients are copied to the
// copies' .grad in fp32 and unscaled there; clip and step run on the copies, which are
// then rounded back into the model. An optional dynamic loss scaler (fp16).
#pragma once

#include <memory>
#include <optional>

#include "toolkit/training/loss_scaler.h"
#include "toolkit/training/precision.h"

namespace csan::training {

class MasterWeightsPrecision : public PrecisionPolicy {
 public:
  MasterWeightsPrecision(std::string name, torch::ScalarType model_dtype, std::optional<LossScalerOptions> scaler);

  std::string name() const override { return name_; }
  void prepare_model(torch::nn::Module& model) override;
  std::vector<torch::Tensor> optimizer_params(const std::vector<torch::Tensor>& model_params) override;
  torch::Tensor scale_loss(const torch::Tensor& loss) override;
  void unscale_grads(const std::vector<torch::Tensor>& params, double multiplier) override;
  void after_update(bool overflow) override;
  void after_step() override;
  bool scales_loss() const override { return scaler_ != nullptr; }
  double loss_scale() const override { return scaler_ ? scaler_->loss_scale() : 1.0; }
  // The scaler state and the master weights (the model holds only their rounding).
  void save(checkpoint::SectionWriter& section) const override;
  void load(const checkpoint::SectionReader& section) override;

  const std::vector<torch::Tensor>& master_params() const { return masters_; }
  const DynamicLossScaler* scaler() const { return scaler_.get(); }

 private:
  std::string name_;
  torch::ScalarType model_dtype_;
  std::unique_ptr<DynamicLossScaler> scaler_;
  std::vector<torch::Tensor> model_params_, masters_;
};

}  // namespace csan::training
