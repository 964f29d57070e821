#include "toolkit/nn/linear.h"

#include <ATen/Parallel.h>
#include <c10/core/impl/LocalDispatchKeySet.h>

#include <algorithm>
#include <cstring>

#include "toolkit/core/float_vectors.h"
#include "toolkit/core/vector_clones.h"
#include "toolkit/nn/onednn_sgemm.h"

namespace csan::nn {

namespace {

using core::Floats8;
using core::load8;

inline __attribute__((always_inline)) float sum8(Floats8 v) {
  float lanes[8];
  std::memcpy(lanes, &v, sizeof lanes);
  return ((lanes[0] + lanes[4]) + (lanes[1] + lanes[5])) + ((lanes[2] + lanes[6]) + (lanes[3] + lanes[7]));
}

// Outputs n0..n0+3 of rows m0..m0+R-1: 4R accumulators of 8 lanes each stay in
// registers while k runs over the depth; each weight vector loaded serves R rows.
template <int R>
inline __attribute__((always_inline)) void tile(const float* x, int64_t m0, int64_t depth, const float* const w[4],
                                                int outputs, const float* bias, int64_t n0, float* y,
                                                int64_t out_features) {
  const int64_t vector_depth = depth - depth % 8;
  Floats8 acc[R][4] = {};
  for (int64_t k = 0; k < vector_depth; k += 8) {
    Floats8 xv[R];
#pragma GCC unroll 4
    for (int i = 0; i < R; ++i) xv[i] = load8(x + (m0 + i) * depth + k);
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      const Floats8 wv = load8(w[j] + k);
#pragma GCC unroll 4
      for (int i = 0; i < R; ++i) acc[i][j] += xv[i] * wv;
    }
  }
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < outputs; ++j) {
      float s = sum8(acc[i][j]);
      for (int64_t k = vector_depth; k < depth; ++k) s += x[(m0 + i) * depth + k] * w[j][k];
      y[(m0 + i) * out_features + n0 + j] = bias ? s + bias[n0 + j] : s;
    }
}

CSAN_WITH_AVX2_CLONE
void few_rows_outputs(const float* x, int64_t rows, int64_t depth, const float* weight, const float* bias, float* y,
                      int64_t out_features, int64_t n_begin, int64_t n_end) {
  for (int64_t n0 = n_begin; n0 < n_end; n0 += 4) {
    const int outputs = static_cast<int>(std::min<int64_t>(4, n_end - n0));
    const float* w[4];
    // A short last block repeats its last row rather than reading past the weight.
    for (int j = 0; j < 4; ++j) w[j] = weight + (n0 + std::min(j, outputs - 1)) * depth;
    int64_t m0 = 0;
    for (; m0 + 3 <= rows; m0 += 3) tile<3>(x, m0, depth, w, outputs, bias, n0, y, out_features);
    if (rows - m0 == 2) tile<2>(x, m0, depth, w, outputs, bias, n0, y, out_features);
    if (rows - m0 == 1) tile<1>(x, m0, depth, w, outputs, bias, n0, y, out_features);
  }
}

}  // namespace

torch::Tensor few_rows_linear(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias) {
  TORCH_CHECK(x.scalar_type() == torch::kFloat && weight.scalar_type() == torch::kFloat && x.device().is_cpu(),
              "few_rows_linear: float CPU tensors only");
  const int64_t depth = weight.size(1), out_features = weight.size(0);
  TORCH_CHECK(x.size(-1) == depth, "few_rows_linear: x has ", x.size(-1), " features, the weight ", depth);
  const torch::Tensor xc = x.contiguous(), wc = weight.contiguous();
  const torch::Tensor bc = bias.defined() ? bias.contiguous() : bias;
  const int64_t rows = depth > 0 ? xc.numel() / depth : 0;
  std::vector<int64_t> shape = x.sizes().vec();
  shape.back() = out_features;
  torch::Tensor y = torch::empty(shape, x.options());
  const float* xp = xc.data_ptr<float>();
  const float* wp = wc.data_ptr<float>();
  const float* bp = bc.defined() ? bc.data_ptr<float>() : nullptr;
  float* yp = y.data_ptr<float>();
  // Blocks of 4 outputs; a thread gets enough of them to be worth waking.
  const int64_t blocks = (out_features + 3) / 4;
  const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, rows * depth / 4));
  at::parallel_for(0, blocks, grain, [&](int64_t begin, int64_t end) {
    few_rows_outputs(xp, rows, depth, wp, bp, yp, out_features, begin * 4, std::min(end * 4, out_features));
  });
  return y;
}

namespace {
thread_local LinearFlopCounter* active_flop_counter = nullptr;
}  // namespace

LinearFlopCounter::LinearFlopCounter() : outer_(active_flop_counter) { active_flop_counter = this; }

LinearFlopCounter::~LinearFlopCounter() { active_flop_counter = outer_; }

void LinearFlopCounter::note(const torch::Tensor& x, const torch::Tensor& weight) {
  if (active_flop_counter == nullptr || x.dim() < 1 || weight.dim() != 2) return;
  const int64_t depth = x.size(-1);
  if (depth == 0) return;
  active_flop_counter->flops_ += 2.0 * double(x.numel() / depth) * double(depth) * double(weight.size(0));
}

torch::Tensor linear(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias) {
  LinearFlopCounter::note(x, weight);
  const bool few_rows = x.dim() >= 1 && x.size(-1) > 0 && x.numel() / x.size(-1) <= kFewRowsLimit;
  const bool plain = x.device().is_cpu() && x.scalar_type() == torch::kFloat && weight.scalar_type() == torch::kFloat &&
                     (!bias.defined() || bias.scalar_type() == torch::kFloat);
  const bool no_autograd = !torch::GradMode::is_enabled() ||
                           !(x.requires_grad() || weight.requires_grad() || (bias.defined() && bias.requires_grad()));
  // Under CPU autocast (bf16 inference) the product belongs to autocast's dtype policy.
  // (What at::autocast::is_cpu_enabled() reads, under the same name in LibTorch 1.13 and 2.x.)
  const bool autocast = !c10::impl::tls_is_dispatch_key_excluded(c10::DispatchKey::AutocastCPU);
  if (plain && no_autograd && !autocast) {
    // oneDNN's sgemm does not pack all of W for a few rows as OpenBLAS does, and decoding
    // with it is faster than with few_rows_linear from 1 row up (linear.h).
    if (onednn_sgemm_available()) return onednn_linear(x, weight, bias);
    if (few_rows) return few_rows_linear(x, weight, bias);
  }
  return torch::nn::functional::linear(x, weight, bias);
}

}  // namespace csan::nn
