#include "toolkit/nn/onednn_sgemm.h"

#include <dlfcn.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "toolkit/core/kernel_switches.h"

namespace csan::nn {

namespace {

// oneDNN's C API (dnnl.h, stable since 1.0): row-major C = alpha op(A) op(B) + beta C;
// returns dnnl_success (0) or an error status.
using Sgemm = int (*)(char transa, char transb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                      int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

Sgemm sgemm() {
  static const Sgemm found = [] {
    if (core::kernel_switch("CSAN_SGEMM") == "libtorch") return Sgemm{nullptr};
    return reinterpret_cast<Sgemm>(::dlsym(RTLD_DEFAULT, "dnnl_sgemm"));
  }();
  return found;
}

}  // namespace

bool onednn_sgemm_available() { return sgemm() != nullptr; }

torch::Tensor onednn_linear(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias) {
  TORCH_CHECK(onednn_sgemm_available(), "onednn_linear: no oneDNN sgemm in this process");
  TORCH_CHECK(x.scalar_type() == torch::kFloat && weight.scalar_type() == torch::kFloat && x.device().is_cpu() &&
                  weight.device().is_cpu() && weight.dim() == 2 && x.dim() >= 1,
              "onednn_linear: float CPU tensors, a matrix of weights");
  const int64_t depth = weight.size(1), outputs = weight.size(0);
  TORCH_CHECK(x.size(-1) == depth, "onednn_linear: x has ", x.size(-1), " features, the weight ", depth);
  TORCH_CHECK(!bias.defined() || (bias.scalar_type() == torch::kFloat && bias.numel() == outputs),
              "onednn_linear: a float bias of ", outputs, " values");
  const torch::Tensor xc = x.contiguous(), wc = weight.contiguous();
  const int64_t rows = x.numel() / std::max<int64_t>(1, depth);
  std::vector<int64_t> shape = x.sizes().vec();
  shape.back() = outputs;
  // The bias goes in first and the product is added to it (beta 1): one pass over y. A
  // copy always (clone): for one row the expanded bias is contiguous already, and
  // contiguous() would hand back the bias itself for sgemm to add into.
  torch::Tensor y = bias.defined() ? bias.reshape({1, outputs}).expand({rows, outputs}).clone(at::MemoryFormat::Contiguous)
                                   : torch::empty({rows, outputs}, x.options());
  if (rows > 0 && outputs > 0) {
    const int status = sgemm()('N', 'T', rows, outputs, depth, 1.0f, xc.data_ptr<float>(), depth,
                               wc.data_ptr<float>(), depth, bias.defined() ? 1.0f : 0.0f, y.data_ptr<float>(), outputs);
    TORCH_CHECK(status == 0, "onednn_linear: dnnl_sgemm failed with status ", status);
  }
  return y.view(shape);
}

}  // namespace csan::nn
