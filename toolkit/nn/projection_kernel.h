// A projection's weight [N, K] converted for inference and held in its own form (bf16,
// int8 packed for a kernel, ...): what a layer multiplies with once its model is converted
// (nn::Projection). Activations come in and results go out as float, so layer norms,
// attention's softmax and the search stay fp32. One subclass per projection kind
// (projection_kind.h). A kernel is immutable once built (or guards what it builds on first
// use), so the threads of parallel batches share it.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <string>

#include "toolkit/nn/precision.h"

namespace csan::nn {

class ProjectionKernel {
 public:
  virtual ~ProjectionKernel() = default;

  virtual Precision precision() const = 0;
  virtual int64_t rows() const = 0;   // N
  virtual int64_t depth() const = 0;  // K

  // x [..., K] float -> x W[first, first + count)ᵀ + bias as float [..., count]; bias
  // [count] float or undefined. A row range is MultiheadAttention's q, k or v of its fused
  // weight: the same rows as in the whole product, computed the same way.
  virtual torch::Tensor multiply(const torch::Tensor& x, const torch::Tensor& bias, int64_t first,
                                 int64_t count) const = 0;
  torch::Tensor multiply(const torch::Tensor& x, const torch::Tensor& bias = {}) const {
    return multiply(x, bias, 0, rows());
  }
  // Rows `ids` (int64, any shape) as float [..., K]: an embedding tied to this projection.
  virtual torch::Tensor embedding(const torch::Tensor& ids) const = 0;
  // A kernel of rows `ids` [S] (int64) only, in this precision: a shortlist's output layer.
  virtual std::shared_ptr<const ProjectionKernel> select_rows(const torch::Tensor& ids) const = 0;

  // The weight as an inference checkpoint stores it under the parameter's name (bf16:
  // bf16 values; int8: int8 values), and int8's per-row scales [N] (undefined otherwise).
  virtual torch::Tensor stored_weight() const = 0;
  virtual torch::Tensor scales() const { return {}; }

  // What multiplies, for the log ("csan avx512-vnni", "onednn"); "" when there is one way.
  virtual std::string engine() const { return ""; }
};

}  // namespace csan::nn
