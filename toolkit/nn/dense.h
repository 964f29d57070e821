// y = x W^T + b. Like torch::nn::Linear but created uninitialized: its owner
// initializes it (fairseq's schemes differ per layer) through nn/init.h.
#pragma once

#include <cstdint>

#include <torch/torch.h>

#include "toolkit/nn/linear.h"

namespace csan::nn {

class DenseImpl : public torch::nn::Module {
 public:
  DenseImpl(int64_t in_features, int64_t out_features, bool bias = true);
  torch::Tensor forward(const torch::Tensor& x) { return linear(x, weight, bias); }

  torch::Tensor weight;  // [out, in]
  torch::Tensor bias;    // [out] or undefined
};
TORCH_MODULE(Dense);

}  // namespace csan::nn
