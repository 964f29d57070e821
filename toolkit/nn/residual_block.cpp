#include "toolkit/nn/residual_block.h"

#include "toolkit/nn/transformer_layer_options.h"

namespace csan::nn {

torch::Tensor residual_block(const torch::Tensor& x, torch::nn::LayerNorm& norm, bool normalize_before, double dropout,
                             bool training, const std::function<torch::Tensor(const torch::Tensor&)>& sublayer) {
  torch::Tensor y = sublayer(normalize_before ? norm(x) : x);
  y = add_dropout_if(x, y, dropout, training);
  return normalize_before ? y : norm(y);
}

}  // namespace csan::nn
