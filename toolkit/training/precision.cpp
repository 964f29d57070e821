#include "toolkit/training/precision.h"

#include "toolkit/core/error.h"
#include "toolkit/training/optimizer.h"

namespace csan::training {

void PrecisionPolicy::unscale_grads(const std::vector<torch::Tensor>& params, double multiplier) {
  multiply_grads(params, multiplier);
}

std::unique_ptr<PrecisionPolicy> make_precision_policy(const std::string& name) {
  if (name == "fp32") return std::make_unique<Fp32Precision>();
  throw Error::for_key("common.precision", "'" + name + "' is not available yet (only fp32)");
}

}  // namespace csan::training
