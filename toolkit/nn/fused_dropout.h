// Dropout that costs one pass and one byte per element. torch::dropout draws a float
// Bernoulli tensor element by element (a serial generator on this LibTorch build),
// divides it by 1-p and multiplies: three V-sized float passes and a 4-byte mask kept
// for backward. Here a counter-based hash of (seed, index) decides each element, in
// parallel and identically for any thread count, the scaled product is written in the
// same pass (optionally added to a residual), and backward reads a uint8 mask.
// The seed is drawn from torch's default CPU generator, so torch::manual_seed and the
// RNG state saved in checkpoints (exact resume) govern it as they govern torch::dropout.
// Tensors on other devices fall back to torch::dropout.
#pragma once

#include <cstdint>

#include <torch/torch.h>

namespace csan::nn {

// Training-mode dropout of x with probability p (0 <= p < 1). Keep probability is p
// rounded to a multiple of 2^-16, and kept elements are scaled so the mean is exact.
torch::Tensor fused_dropout(const torch::Tensor& x, double p);

// residual + fused_dropout(x, p) in one pass (the sublayer output of a Transformer layer).
torch::Tensor fused_dropout_add(const torch::Tensor& residual, const torch::Tensor& x, double p);

}  // namespace csan::nn
