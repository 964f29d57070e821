// y = x W^T + b. Like torch::nn::Linear but created uninitialized: its owner
// initializes it (fairseq's schemes differ per layer) through nn/init.h. W is a
// projection (projection.h): converted for inference, a kernel multiplies instead.
#pragma once

#include <torch/torch.h>

#include <cstdint>

#include "toolkit/nn/projection.h"

namespace csan::nn {

class DenseImpl : public ProjectingModule {
 public:
  DenseImpl(int64_t in_features, int64_t out_features, bool bias = true);
  torch::Tensor forward(const torch::Tensor& x) { return projection(x, weight, bias); }
  std::vector<Site> projection_sites() override { return {{"weight", &weight, &projection}}; }

  torch::Tensor weight;  // [out, in]; undefined once converted
  torch::Tensor bias;    // [out] or undefined
  Projection projection;
};
TORCH_MODULE(Dense);

}  // namespace csan::nn
