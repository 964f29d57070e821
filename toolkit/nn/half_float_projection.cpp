#include "toolkit/nn/half_float_projection.h"

#include "toolkit/core/cpu_flags.h"
#include "toolkit/core/registry.h"
#include "toolkit/nn/projection_kind.h"

CSAN_REGISTRATION_ANCHOR(half_float_projection)

namespace csan::nn {

namespace {

class HalfFloatKernel : public ProjectionKernel {
 public:
  HalfFloatKernel(torch::Tensor weight, bool emulated) : weight_(std::move(weight)), emulated_(emulated) {}

  Precision precision() const override {
    return weight_.scalar_type() == torch::kBFloat16 ? Precision::bf16 : Precision::fp16;
  }
  int64_t rows() const override { return weight_.size(0); }
  int64_t depth() const override { return weight_.size(1); }

  torch::Tensor multiply(const torch::Tensor& x, const torch::Tensor& bias, int64_t first,
                         int64_t count) const override {
    // A row range is a view of the rows: no copy.
    const torch::Tensor w = first == 0 && count == rows() ? weight_ : weight_.narrow(0, first, count);
    if (emulated_) return bf16_linear_in_fp32(x, w, bias);
    const torch::Tensor b = bias.defined() ? bias.to(w.scalar_type()) : bias;
    // at::linear adds the bias inside the GEMM for any rank (one bf16 rounding);
    // torch::nn::functional::linear adds it afterwards for 3-D inputs (two).
    return at::linear(x.to(w.scalar_type()), w, b).to(x.scalar_type());
  }
  torch::Tensor embedding(const torch::Tensor& ids) const override {
    return torch::embedding(weight_, ids).to(torch::kFloat);
  }
  std::shared_ptr<const ProjectionKernel> select_rows(const torch::Tensor& ids) const override {
    return std::make_shared<HalfFloatKernel>(weight_.index_select(0, ids), emulated_);
  }
  torch::Tensor stored_weight() const override { return weight_; }

 private:
  torch::Tensor weight_;  // [N, K] bf16 or fp16
  bool emulated_;
};

bool emulated_on(const torch::Tensor& weight, torch::ScalarType type) {
  return type == torch::kBFloat16 && weight.device().is_cpu() && bf16_products_emulated();
}

ProjectionKind half_float_kind(Precision precision, torch::ScalarType type) {
  ProjectionKind kind;
  kind.precision = precision;
  kind.convert = [type](const torch::Tensor& weight) {
    return half_float_kernel(weight, type, emulated_on(weight, type));
  };
  kind.stored_type = type;
  if (type == torch::kBFloat16) {
    kind.restore = [type](const torch::Tensor& stored, const torch::Tensor&) {
      return half_float_kernel(stored, type, emulated_on(stored, type));
    };
    kind.fast_cpu_flag = "avx512_bf16";
    kind.without_cpu_flag = [] {
      return bf16_products_emulated()
                 ? std::string(" and AVX-512; bf16 products are emulated in fp32 (bf16's roundings, no speed gain)")
                 : std::string("; bf16 products are emulated and may be slower than fp32");
    };
  } else {
    kind.on_cpu = false;  // LibTorch's CPU fp16 products are reference loops
  }
  return kind;
}

const core::Registrar<ProjectionKind> register_bf16(projection_kinds(), precision_name(Precision::bf16),
                                                    half_float_kind(Precision::bf16, torch::kBFloat16));
const core::Registrar<ProjectionKind> register_fp16(projection_kinds(), precision_name(Precision::fp16),
                                                    half_float_kind(Precision::fp16, torch::kHalf));

}  // namespace

bool bf16_products_emulated() {
  static const bool emulated = !(core::cpu_has("avx512bw") && core::cpu_has("avx512vl") && core::cpu_has("avx512dq"));
  return emulated;
}

torch::Tensor bf16_linear_in_fp32(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias) {
  const auto rounded = [](const torch::Tensor& t) { return t.to(torch::kBFloat16).to(torch::kFloat); };
  return rounded(at::linear(rounded(x), weight.to(torch::kFloat), bias.defined() ? rounded(bias) : bias));
}

std::shared_ptr<const ProjectionKernel> half_float_kernel(const torch::Tensor& weight, torch::ScalarType type,
                                                          bool emulated) {
  TORCH_CHECK(weight.dim() == 2 && (type == torch::kBFloat16 || type == torch::kHalf),
              "half_float_kernel: a matrix, to bf16 or fp16");
  return std::make_shared<HalfFloatKernel>(weight.detach().to(type).contiguous(), emulated && type == torch::kBFloat16);
}

}  // namespace csan::nn
