// The position-wise feed-forward block: fc2(dropout(activation(fc1(x)))).
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <string>

#include "toolkit/nn/dense.h"

namespace csan::nn {

struct FeedForwardOptions {
  int64_t embed_dim = 512;
  int64_t ffn_dim = 2048;
  std::string activation = "relu";  // relu | gelu | swish (SiLU, x * sigmoid(x): Marian's)
  double activation_dropout = 0.0;
};

class FeedForwardImpl : public torch::nn::Module {
 public:
  explicit FeedForwardImpl(const FeedForwardOptions& options);
  torch::Tensor forward(const torch::Tensor& x);

  Dense fc1{nullptr}, fc2{nullptr};

 private:
  FeedForwardOptions options_;
  enum class Activation { relu, gelu, swish } activation_ = Activation::relu;
};
TORCH_MODULE(FeedForward);

}  // namespace csan::nn
