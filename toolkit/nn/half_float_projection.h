// bf16 and fp16 projections (csan-generate --precision bf16|fp16): the weight rounded to
// bfloat16 (CPU and GPU) or IEEE half precision (GPUs: their fp16 tensor cores). Products
// take fp32 activations, run in that type and return fp32.
#pragma once

#include <torch/torch.h>

#include <memory>

#include "toolkit/nn/projection_kernel.h"

namespace csan::nn {

// LibTorch multiplies bf16 matrices on the CPU with oneDNN only where the CPU has AVX-512
// (BW, VL, DQ); elsewhere its reference loop decoded Multi30k test2016 at 1 sentence/s
// against fp32's 52 (AVX2 EPYC). There bf16 products are emulated (bf16_linear_in_fp32).
bool bf16_products_emulated();
// x W^T + b with oneDNN's bf16 roundings at fp32 speed: x and b rounded to bf16, the bf16
// W widened for this product (the model keeps bf16's memory), fp32 accumulation, the
// result rounded to bf16 and returned as float.
torch::Tensor bf16_linear_in_fp32(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias);

// The kernel of `weight` [N, K] (float, or already of `type`) in `type` (kBFloat16 or
// kHalf). `emulated`: bf16 products run as bf16_linear_in_fp32; the kinds pass
// bf16_products_emulated() for a CPU weight, tests either.
std::shared_ptr<const ProjectionKernel> half_float_kernel(const torch::Tensor& weight, torch::ScalarType type,
                                                          bool emulated);

}  // namespace csan::nn
