// relu(depthwise 2-D convolution): each channel of x [B, C, H, W] convolved with its own
// k x k filter (odd k, 'same' zero padding) plus its bias, then ReLU, as one autograd
// node (the tagger's Conv2d over attention probabilities, one channel per head). The
// same as relu(torch::conv2d(x, weight, bias, 1, k / 2, 1, C)), but LibTorch's grouped
// convolution with one channel per group runs far slower on the CPU than these loops
// over contiguous rows (shifted row segments, multiply-adds the compiler vectorizes).
// Float32 CPU tensors; others take torch::conv2d.
#pragma once

#include <torch/torch.h>

namespace csan::nn {

// x [B, C, H, W], weight [C, 1, k, k], bias [C] -> [B, C, H, W].
torch::Tensor relu_depthwise_conv2d(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias);

}  // namespace csan::nn
