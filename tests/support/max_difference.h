// Shared by the attention tests that compare two runs parameter by parameter (module
// against formula, fused kernel against general path): the largest absolute difference
// between corresponding tensors of two equally long lists, such as their gradients.
#pragma once

#include <torch/torch.h>

#include <algorithm>
#include <vector>

namespace csan::testing {

inline double max_difference(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, (a[i] - b[i]).abs().max().item<double>());
  return worst;
}

}  // namespace csan::testing
