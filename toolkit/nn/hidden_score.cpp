#include "toolkit/nn/hidden_score.h"

#include <limits>

namespace csan::nn {

double hidden_score(torch::ScalarType dtype) {
  return dtype == torch::kHalf ? 0.5 * std::numeric_limits<c10::Half>::lowest() : kHiddenScore;
}

torch::Tensor bias_as(const torch::Tensor& bias, torch::ScalarType dtype) {
  if (bias.scalar_type() == dtype) return bias;
  return dtype == torch::kHalf ? bias.clamp_min(hidden_score(dtype)).to(dtype) : bias.to(dtype);
}

}  // namespace csan::nn
