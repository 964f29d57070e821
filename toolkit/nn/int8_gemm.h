// csan's own int8 product for --precision int8 on CPUs with AVX512-VNNI: y = x W^T + b
// with W int8 (one symmetric scale per output row) and x quantized per call, per row,
// to 8-bit unsigned values.
//
// Why not LibTorch's quantized::linear_dynamic: its onednn engine (LibTorch 1.13,
// oneDNN 2.6) compiles the activation's scale and zero point into each primitive, so a
// decoder creates new primitives on almost every call. On the Zen 5 EPYC that made int8
// decoding 0.38x fp32 (2.1 s of primitive creation against 0.29 s of products for 20
// sentences). Here the weight is reordered once, at load, into the layout the VNNI
// instruction reads, and each call only quantizes its activations.
//
// The arithmetic, for row m of x (K values) and output n:
//   lo = min(0, min_k x[m,k]), hi = max(0, max_k x[m,k])   (0 stays exactly representable)
//   s = (hi - lo) / 255,  z = round(-lo / s),  u[k] = clamp(round(x[m,k] / s) + z, 0, 255)
//   y[m,n] = (s * s_w[n]) * (sum_k u[k] W[n,k] - z * sum_k W[n,k]) + b[n]
// (asymmetric per-row activations: a ReLU's output uses all 8 bits, where a symmetric
// per-tensor scale as in PyTorch's dynamic quantization leaves 7). The sums are exact
// int32 (|u W| <= 255 x 127, K up to 65,000); `int8_gemm_reference` computes the same
// thing in plain C++, rounding for rounding, and the tests hold the kernel to it.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <vector>

namespace csan::nn {

// True where the kernel runs: AVX512-F/BW/VL/DQ and AVX512-VNNI (Zen 4/5, Ice Lake and
// later Xeons). Elsewhere int8 products go to LibTorch's quantized engine.
bool int8_gemm_available();

// An int8 weight [N, K] with its per-row scales, reordered for the kernel: panels of 64
// output rows, and within a panel, for each group of 4 inputs, 4 blocks of 16 rows x 4
// bytes (one 64-byte vector each, what vpdpbusd multiplies). N is padded to a multiple of
// 64 and K to a multiple of 4 with zeros; the row sums of W serve the zero point.
class PackedInt8Weight {
 public:
  // values [N, K] int8, scales [N] float.
  PackedInt8Weight(const torch::Tensor& values, const torch::Tensor& scales);
  int64_t rows() const { return rows_; }
  int64_t depth() const { return depth_; }
  int64_t groups() const { return (depth_ + 3) / 4; }
  int64_t panels() const { return (rows_ + 63) / 64; }
  const int8_t* panel(int64_t p) const { return packed_.data() + p * groups() * 256; }
  const int32_t* row_sums() const { return row_sums_.data(); }
  const float* scales() const { return scales_.data(); }
  size_t bytes() const { return packed_.size() + 4 * (row_sums_.size() + scales_.size()); }
  // Row n's K int8 values as they were given, read back from the packed layout (what a
  // weight whose plain values were released is looked up from).
  void unpack_row(int64_t n, int8_t* out) const;

 private:
  int64_t rows_, depth_;
  std::vector<int8_t> packed_;
  std::vector<int32_t> row_sums_;  // padded to panels() x 64
  std::vector<float> scales_;      // padded to panels() x 64
};

// x [..., K] float -> [..., N] float; bias [N] float or undefined. Needs int8_gemm_available().
torch::Tensor int8_gemm(const torch::Tensor& x, const PackedInt8Weight& weight, const torch::Tensor& bias = {});
// The product with rows [first, first + count) of the weight only (a row range of a fused
// q|k|v weight): [..., count], bias [count] or undefined. Each output is computed exactly
// as in the whole product, so a range equals the same columns of it to the last bit.
torch::Tensor int8_gemm(const torch::Tensor& x, const PackedInt8Weight& weight, int64_t first, int64_t count,
                        const torch::Tensor& bias = {});
// The same arithmetic without vector instructions, from the plain int8 values [N, K] and
// scales [N]: the definition the kernel is tested against (equal to the last bit).
torch::Tensor int8_gemm_reference(const torch::Tensor& x, const torch::Tensor& values, const torch::Tensor& scales,
                                  const torch::Tensor& bias = {});

}  // namespace csan::nn
