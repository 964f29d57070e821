#include "toolkit/nn/fused_dropout.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>

#include <cmath>
#include <mutex>

#include "toolkit/core/splitmix64.h"
#include "toolkit/nn/transformer_layer_options.h"

namespace csan::nn {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

constexpr int64_t kPerHash = 4;  // 16-bit draws per 64-bit hash
constexpr int64_t kGrain = 1 << 14;

uint64_t draw_seed() {
  auto generator = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(generator.mutex());
  return generator.get<at::CPUGeneratorImpl>()->random64();
}

struct DropSpec {
  uint32_t threshold;  // an element is dropped when its 16-bit draw is below this
  float scale;         // 1 / keep probability
};

DropSpec drop_spec(double p) {
  TORCH_CHECK(p >= 0 && p < 1, "dropout probability must be in [0, 1), got ", p);
  const auto threshold = static_cast<uint32_t>(std::lround(p * 65536.0));
  return {threshold, static_cast<float>(65536.0 / (65536.0 - threshold))};
}

// mask[i] = 1 if element i is kept. out (if given) = residual + x * mask * scale.
void draw_and_apply(uint64_t seed, const DropSpec& spec, int64_t n, uint8_t* mask, const float* x,
                    const float* residual, float* out) {
  const int64_t blocks = (n + kPerHash - 1) / kPerHash;
  at::parallel_for(0, blocks, kGrain / kPerHash, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      uint64_t bits = core::splitmix64_mix(seed + static_cast<uint64_t>(b) * core::kSplitMix64Increment);
      const int64_t first = b * kPerHash, last = std::min(n, first + kPerHash);
      for (int64_t i = first; i < last; ++i, bits >>= 16) mask[i] = (bits & 0xffff) >= spec.threshold;
    }
    if (!out) return;
    const int64_t first = begin * kPerHash, last = std::min(n, end * kPerHash);
    if (residual) {
      for (int64_t i = first; i < last; ++i) out[i] = residual[i] + x[i] * (mask[i] * spec.scale);
    } else {
      for (int64_t i = first; i < last; ++i) out[i] = x[i] * (mask[i] * spec.scale);
    }
  });
}

torch::Tensor masked_scale(const torch::Tensor& x, const torch::Tensor& mask, float scale) {
  if (x.scalar_type() != torch::kFloat) return x * mask.to(x.scalar_type()) * scale;
  auto in = x.contiguous();
  auto out = torch::empty_like(in);
  const float* src = in.data_ptr<float>();
  const uint8_t* keep = mask.data_ptr<uint8_t>();
  float* dst = out.data_ptr<float>();
  at::parallel_for(0, in.numel(), kGrain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) dst[i] = src[i] * (keep[i] * scale);
  });
  return out;
}

// Forward of both functions: the mask, and residual + x * mask * scale (residual may be
// undefined).
std::pair<torch::Tensor, torch::Tensor> forward_pass(const torch::Tensor& residual, const torch::Tensor& x,
                                                      const DropSpec& spec) {
  auto in = x.contiguous();
  auto mask = torch::empty(in.sizes(), in.options().dtype(torch::kByte));
  const uint64_t seed = draw_seed();
  if (in.scalar_type() != torch::kFloat || (residual.defined() && residual.scalar_type() != torch::kFloat)) {
    draw_and_apply(seed, spec, in.numel(), mask.data_ptr<uint8_t>(), nullptr, nullptr, nullptr);
    auto dropped = in * mask.to(in.scalar_type()) * spec.scale;
    return {mask, residual.defined() ? residual + dropped : dropped};
  }
  auto res = residual.defined() ? residual.contiguous() : torch::Tensor();
  auto out = torch::empty_like(in);
  draw_and_apply(seed, spec, in.numel(), mask.data_ptr<uint8_t>(), in.data_ptr<float>(),
                 res.defined() ? res.data_ptr<float>() : nullptr, out.data_ptr<float>());
  return {mask, out};
}

class FusedDropout : public torch::autograd::Function<FusedDropout> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, double p) {
    const auto spec = drop_spec(p);
    auto [mask, out] = forward_pass(torch::Tensor(), x, spec);
    ctx->save_for_backward({mask});
    ctx->saved_data["scale"] = static_cast<double>(spec.scale);
    return out;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad) {
    const auto mask = ctx->get_saved_variables()[0];
    const auto scale = static_cast<float>(ctx->saved_data["scale"].toDouble());
    return {masked_scale(grad[0], mask, scale), torch::Tensor()};
  }
};

class FusedDropoutAdd : public torch::autograd::Function<FusedDropoutAdd> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& residual, const torch::Tensor& x,
                               double p) {
    const auto spec = drop_spec(p);
    auto [mask, out] = forward_pass(residual, x, spec);
    ctx->save_for_backward({mask});
    ctx->saved_data["scale"] = static_cast<double>(spec.scale);
    return out;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad) {
    const auto mask = ctx->get_saved_variables()[0];
    const auto scale = static_cast<float>(ctx->saved_data["scale"].toDouble());
    return {grad[0], masked_scale(grad[0], mask, scale), torch::Tensor()};
  }
};

}  // namespace

torch::Tensor fused_dropout(const torch::Tensor& x, double p) {
  if (!x.device().is_cpu()) return torch::dropout(x, p, true);
  return FusedDropout::apply(x, p);
}

torch::Tensor fused_dropout_add(const torch::Tensor& residual, const torch::Tensor& x, double p) {
  if (!x.device().is_cpu()) return residual + torch::dropout(x, p, true);
  TORCH_CHECK(residual.sizes() == x.sizes(), "fused_dropout_add: residual ", residual.sizes(), " vs input ",
              x.sizes());
  return FusedDropoutAdd::apply(residual, x, p);
}

torch::Tensor dropout_if(const torch::Tensor& x, double p, bool training) {
  if (!training || p <= 0) return x;
  return fused_dropout(x, p);
}

torch::Tensor add_dropout_if(const torch::Tensor& residual, const torch::Tensor& x, double p, bool training) {
  if (!training || p <= 0) return residual + x;
  return fused_dropout_add(residual, x, p);
}

}  // namespace csan::nn
