#include "toolkit/nn/fused_attention.h"

#include <ATen/Parallel.h>
#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace csan::nn {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// The Fortran BLAS that LibTorch itself calls (libblas.so.3: OpenBLAS here). Looked up
// at run time because LibTorch links it privately and exports no GEMM of its own;
// calling it directly per (sentence, head) avoids an ATen dispatch per small matrix.
using SgemmFn = void (*)(const char*, const char*, const int*, const int*, const int*, const float*, const float*,
                         const int*, const float*, const int*, const float*, float*, const int*);

SgemmFn blas_sgemm() {
  static const SgemmFn fn = reinterpret_cast<SgemmFn>(dlsym(RTLD_DEFAULT, "sgemm_"));
  return fn;
}

// Row-major C[m, n] = alpha * op(A) op(B) + beta * C, where op(A) is [m, k] and op(B)
// [k, n]; lda/ldb/ldc are row strides. Column-major BLAS sees the transposes, so the
// operands swap places and the flags stay as they are.
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
          const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  const char ta = trans_a ? 'T' : 'N', tb = trans_b ? 'T' : 'N';
  const int im = static_cast<int>(m), in = static_cast<int>(n), ik = static_cast<int>(k);
  const int ilda = static_cast<int>(lda), ildb = static_cast<int>(ldb), ildc = static_cast<int>(ldc);
  blas_sgemm()(&tb, &ta, &in, &im, &ik, &alpha, b, &ildb, a, &ilda, &beta, c, &ildc);
}

// Geometry of one call: where head h of sentence b starts in each tensor.
struct Layout {
  int64_t batch, heads, head_dim, tq, tk;
  int64_t q_batch, q_row, k_batch, k_row, v_batch, v_row;  // strides (elements)
  const bool* padding = nullptr;                           // [B, Tk], contiguous
  bool causal = false;
  float scaling = 1;
  const float* bias = nullptr;            // [B or 1, H or 1, Tq, Tk], contiguous
  int64_t bias_batch = 0, bias_head = 0;  // strides; 0 where broadcast

  Layout(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, int64_t h)
      : batch(q.size(0)),
        heads(h),
        head_dim(q.size(2) / h),
        tq(q.size(1)),
        tk(k.size(1)),
        q_batch(q.stride(0)),
        q_row(q.stride(1)),
        k_batch(k.stride(0)),
        k_row(k.stride(1)),
        v_batch(v.stride(0)),
        v_row(v.stride(1)) {}

  bool visible(int64_t b, int64_t i, int64_t j) const {
    return !(padding && padding[b * tk + j]) && !(causal && j > tk - tq + i);
  }
};

// probs[Tq, Tk] <- softmax over the visible keys of scores (masked entries become 0).
void masked_softmax(const Layout& g, int64_t b, float* probs) {
  for (int64_t i = 0; i < g.tq; ++i) {
    float* row = probs + i * g.tk;
    float max = -std::numeric_limits<float>::infinity();
    for (int64_t j = 0; j < g.tk; ++j)
      if (g.visible(b, i, j)) max = std::max(max, row[j]);
    if (max == -std::numeric_limits<float>::infinity()) {
      std::fill(row, row + g.tk, 0.0f);
      continue;
    }
    float sum = 0;
    for (int64_t j = 0; j < g.tk; ++j) {
      row[j] = g.visible(b, i, j) ? std::exp(row[j] - max) : 0.0f;
      sum += row[j];
    }
    const float inv = 1.0f / sum;
    for (int64_t j = 0; j < g.tk; ++j) row[j] *= inv;
  }
}

void forward_kernel(const Layout& g, const float* q, const float* k, const float* v, float* probs, float* out,
                    int64_t out_batch, int64_t out_row) {
  const int64_t d = g.head_dim, block = g.tq * g.tk;
  at::parallel_for(0, g.batch * g.heads, 1, [&](int64_t begin, int64_t end) {
    for (int64_t bh = begin; bh < end; ++bh) {
      const int64_t b = bh / g.heads, h = bh % g.heads;
      float* p = probs + bh * block;
      const float* qh = q + b * g.q_batch + h * d;
      const float* vh = v + b * g.v_batch + h * d;
      gemm(false, true, g.tq, g.tk, d, g.scaling, qh, g.q_row, k + b * g.k_batch + h * d, g.k_row, 0, p, g.tk);
      if (g.bias) {
        const float* bh_bias = g.bias + b * g.bias_batch + h * g.bias_head;
        for (int64_t i = 0; i < block; ++i) p[i] += bh_bias[i];
      }
      masked_softmax(g, b, p);
      gemm(false, false, g.tq, d, g.tk, 1, p, g.tk, vh, g.v_row, 0, out + b * out_batch + h * d, out_row);
    }
  });
}

// Gradients [B, T, H*d] (contiguous) of q, k, v from the output gradient (contiguous);
// with dscores, also the gradient of the scores [B*H, Tq, Tk] (that of an additive bias).
void backward_kernel(const Layout& g, const float* q, const float* k, const float* v, const float* probs,
                     const float* grad_out, float* dq, float* dk, float* dv, float* dscores) {
  const int64_t d = g.head_dim, D = g.heads * d, block = g.tq * g.tk;
  at::parallel_for(0, g.batch * g.heads, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> dp(block);
    for (int64_t bh = begin; bh < end; ++bh) {
      const int64_t b = bh / g.heads, h = bh % g.heads;
      const float* p = probs + bh * block;
      const float* go = grad_out + b * g.tq * D + h * d;
      const float* qh = q + b * g.q_batch + h * d;
      const float* kh = k + b * g.k_batch + h * d;
      const float* vh = v + b * g.v_batch + h * d;
      // dV = P^T dO;  dP = dO V^T;  dS = P (dP - rowsum(P dP));  dQ = s dS K;  dK = s dS^T Q
      gemm(true, false, g.tk, d, g.tq, 1, p, g.tk, go, D, 0, dv + b * g.tk * D + h * d, D);
      gemm(false, true, g.tq, g.tk, d, 1, go, D, vh, g.v_row, 0, dp.data(), g.tk);
      for (int64_t i = 0; i < g.tq; ++i) {
        const float* pr = p + i * g.tk;
        float* r = dp.data() + i * g.tk;
        float dot = 0;
        for (int64_t j = 0; j < g.tk; ++j) dot += pr[j] * r[j];
        for (int64_t j = 0; j < g.tk; ++j) r[j] = pr[j] * (r[j] - dot);
      }
      if (dscores) std::copy(dp.begin(), dp.end(), dscores + bh * block);
      gemm(false, false, g.tq, d, g.tk, g.scaling, dp.data(), g.tk, kh, g.k_row, 0, dq + b * g.tq * D + h * d, D);
      gemm(true, false, g.tk, d, g.tq, g.scaling, dp.data(), g.tk, qh, g.q_row, 0, dk + b * g.tk * D + h * d, D);
    }
  });
}

class FusedAttentionFunction : public torch::autograd::Function<FusedAttentionFunction> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& q, const torch::Tensor& k,
                               const torch::Tensor& v, const torch::Tensor& padding, const torch::Tensor& bias,
                               bool causal, int64_t heads, double scaling) {
    Layout g(q, k, v, heads);
    g.causal = causal;
    g.scaling = static_cast<float>(scaling);
    if (padding.numel() > 0) g.padding = padding.data_ptr<bool>();
    if (bias.numel() > 0) {
      g.bias = bias.data_ptr<float>();
      g.bias_batch = bias.size(0) == 1 ? 0 : bias.stride(0);
      g.bias_head = bias.size(1) == 1 ? 0 : bias.stride(1);
    }
    auto probs = torch::empty({g.batch * g.heads, g.tq, g.tk}, q.options());
    auto out = torch::empty({g.batch, g.tq, heads * g.head_dim}, q.options());
    forward_kernel(g, q.data_ptr<float>(), k.data_ptr<float>(), v.data_ptr<float>(), probs.data_ptr<float>(),
                   out.data_ptr<float>(), out.stride(0), out.stride(1));
    ctx->save_for_backward({q, k, v, probs});
    ctx->saved_data["heads"] = heads;
    ctx->saved_data["scaling"] = scaling;
    ctx->saved_data["causal"] = causal;
    ctx->saved_data["bias_sizes"] =
        bias.numel() > 0 && bias.requires_grad() ? bias.sizes().vec() : std::vector<int64_t>{};
    return out;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad) {
    const auto saved = ctx->get_saved_variables();
    const auto &q = saved[0], &k = saved[1], &v = saved[2], &probs = saved[3];
    Layout g(q, k, v, ctx->saved_data["heads"].toInt());
    g.scaling = static_cast<float>(ctx->saved_data["scaling"].toDouble());
    // Masked entries have probability 0, so the mask itself is not needed here.
    const auto grad_out = grad[0].contiguous();
    auto dq = torch::empty({g.batch, g.tq, q.size(2)}, q.options());
    auto dk = torch::empty({g.batch, g.tk, k.size(2)}, k.options());
    auto dv = torch::empty({g.batch, g.tk, v.size(2)}, v.options());
    const auto bias_sizes = ctx->saved_data["bias_sizes"].toIntVector();
    torch::Tensor dscores;
    if (!bias_sizes.empty()) dscores = torch::empty({g.batch, g.heads, g.tq, g.tk}, q.options());
    backward_kernel(g, q.data_ptr<float>(), k.data_ptr<float>(), v.data_ptr<float>(), probs.data_ptr<float>(),
                    grad_out.data_ptr<float>(), dq.data_ptr<float>(), dk.data_ptr<float>(), dv.data_ptr<float>(),
                    dscores.defined() ? dscores.data_ptr<float>() : nullptr);
    torch::Tensor dbias;
    if (dscores.defined()) {  // summed over the dimensions the bias was broadcast along
      std::vector<int64_t> reduce;
      if (bias_sizes[0] == 1 && g.batch > 1) reduce.push_back(0);
      if (bias_sizes[1] == 1 && g.heads > 1) reduce.push_back(1);
      dbias = reduce.empty() ? dscores : dscores.sum(reduce, /*keepdim=*/true);
    }
    return {dq, dk, dv, torch::Tensor(), dbias, torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }
};

// BLAS needs unit column stride and a row stride covering a row.
torch::Tensor blas_rows(const torch::Tensor& x) {
  return x.stride(2) == 1 && x.stride(1) >= x.size(2) ? x : x.contiguous();
}

}  // namespace

bool fused_attention_available() { return blas_sgemm() != nullptr; }

torch::Tensor fused_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                              const torch::Tensor& key_padding_mask, bool causal, int64_t num_heads, double scaling,
                              const torch::Tensor& bias) {
  TORCH_CHECK(fused_attention_available(), "fused attention: no BLAS sgemm_ in this process");
  TORCH_CHECK(q.scalar_type() == torch::kFloat && q.device().is_cpu(), "fused attention: float32 CPU tensors only");
  TORCH_CHECK(q.dim() == 3 && k.dim() == 3 && v.dim() == 3 && k.sizes() == v.sizes() && q.size(0) == k.size(0) &&
                  q.size(2) == k.size(2) && q.size(2) % num_heads == 0,
              "fused attention: bad shapes q ", q.sizes(), " k ", k.sizes(), " v ", v.sizes());
  // Autograd functions take no undefined inputs: "no mask" is an empty tensor.
  torch::Tensor padding = torch::empty({0}, torch::kBool);
  if (key_padding_mask.defined()) {
    TORCH_CHECK(key_padding_mask.sizes() == torch::IntArrayRef({k.size(0), k.size(1)}),
                "fused attention: padding mask ", key_padding_mask.sizes(), " for keys ", k.sizes());
    padding = key_padding_mask.to(torch::kBool).contiguous();
  }
  torch::Tensor bias_block = torch::empty({0}, q.options());
  if (bias.defined()) {
    TORCH_CHECK(bias.dim() == 4 && (bias.size(0) == 1 || bias.size(0) == q.size(0)) &&
                    (bias.size(1) == 1 || bias.size(1) == num_heads) && bias.size(2) == q.size(1) &&
                    bias.size(3) == k.size(1),
                "fused attention: bias ", bias.sizes(), " for ", q.size(0), " rows, ", num_heads, " heads, ", q.size(1),
                " queries and ", k.size(1), " keys");
    bias_block = bias.to(torch::kFloat).contiguous();
  }
  return FusedAttentionFunction::apply(blas_rows(q), blas_rows(k), blas_rows(v), padding, bias_block, causal, num_heads,
                                       scaling);
}

}  // namespace csan::nn
