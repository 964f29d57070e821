// y = x W^T + b through oneDNN's sgemm, for float products in inference (nn::linear's, of
// any number of rows, where the process has oneDNN).
//
// Why: Debian's LibTorch multiplies float matrices with OpenBLAS, which CTranslate2 does
// not: on AMD CPUs its wheels use oneDNN's sgemm, and so does csan where the process has it.
// On a decoding step's products (tens to hundreds of rows by 256-8000 outputs) oneDNN is as
// fast as OpenBLAS's AVX-512 kernels or faster (up to 1.3x at 40 rows), and it picks its
// kernels from the CPU itself, where OpenBLAS takes them from OPENBLAS_CORETYPE when that is set
// (tools/experiments/results/ctranslate2-cpu-2026-11-29.md).
// Debian's libtorch_cpu loads libdnnl.so.2, whose dnnl_sgemm is looked up at run time: a
// LibTorch with oneDNN linked in (the pip wheels, which hide its symbols) leaves the
// products to at::linear, as does CSAN_SGEMM=libtorch (for comparisons).
#pragma once

#include <torch/torch.h>

namespace csan::nn {

// Whether onednn_linear can run here (dnnl_sgemm found, CSAN_SGEMM not "libtorch").
bool onednn_sgemm_available();

// x [..., K] float, weight [N, K] float, bias [N] or undefined -> [..., N]; no autograd,
// CPU tensors. Throws (c10::Error) where onednn_sgemm_available() is false or oneDNN fails.
torch::Tensor onednn_linear(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias = {});

}  // namespace csan::nn
