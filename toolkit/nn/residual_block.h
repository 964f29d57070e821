// The residual wrapper of every sublayer (self-attention, cross-attention, feed-forward)
// in every family: fairseq's
//   post-norm:  x = norm(x + dropout(sublayer(x)))
//   pre-norm:   x = x + dropout(sublayer(norm(x)))
// with the residual add and the dropout fused in training (fused_dropout.h).
#pragma once

#include <torch/torch.h>

#include <functional>

namespace csan::nn {

torch::Tensor residual_block(const torch::Tensor& x, torch::nn::LayerNorm& norm, bool normalize_before, double dropout,
                             bool training, const std::function<torch::Tensor(const torch::Tensor&)>& sublayer);

}  // namespace csan::nn
