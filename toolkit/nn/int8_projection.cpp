#include "toolkit/nn/int8_projection.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/quantized/Quantizer.h>
#include <torch/version.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

#include "toolkit/core/cpu_flags.h"
#include "toolkit/core/error.h"
#include "toolkit/core/kernel_switches.h"
#include "toolkit/core/registry.h"
#include "toolkit/nn/int8_gemm.h"
#include "toolkit/nn/projection_kind.h"

CSAN_REGISTRATION_ANCHOR(int8_projection)

namespace csan::nn {

namespace {

// Rows `ids` (any shape) as float [..., K]: int8 rows `rows` [n, K] times their scales.
torch::Tensor dequantized_rows(const torch::Tensor& rows, const torch::Tensor& scales, const torch::Tensor& ids) {
  std::vector<int64_t> shape = ids.sizes().vec();
  shape.push_back(rows.size(1));
  return rows.view(shape).to(torch::kFloat) * torch::embedding(scales.unsqueeze(1), ids);
}

// csan's kernel: the pack is the weight.
class Int8VnniKernel : public ProjectionKernel {
 public:
  explicit Int8VnniKernel(const Int8Weight& weight)
      : packed_(weight.values, weight.scales), scales_(weight.scales.to(torch::kFloat).contiguous()) {}

  Precision precision() const override { return Precision::int8; }
  int64_t rows() const override { return packed_.rows(); }
  int64_t depth() const override { return packed_.depth(); }

  torch::Tensor multiply(const torch::Tensor& x, const torch::Tensor& bias, int64_t first,
                         int64_t count) const override {
    return int8_gemm(x, packed_, first, count, bias.defined() ? bias.to(torch::kFloat) : bias);
  }
  torch::Tensor embedding(const torch::Tensor& ids) const override {
    return dequantized_rows(values_of(ids.reshape(-1)), scales_, ids);
  }
  std::shared_ptr<const ProjectionKernel> select_rows(const torch::Tensor& ids) const override {
    return std::make_shared<Int8VnniKernel>(Int8Weight{values_of(ids), scales_.index_select(0, ids)});
  }
  torch::Tensor stored_weight() const override { return values_of(torch::arange(rows())); }
  torch::Tensor scales() const override { return scales_; }
  std::string engine() const override { return "csan avx512-vnni"; }

 private:
  // Rows `ids` [n] of the weight as int8 [n, K], read back from the pack.
  torch::Tensor values_of(const torch::Tensor& ids) const {
    const torch::Tensor wanted = ids.to(torch::kLong).contiguous();
    torch::Tensor out = torch::empty({wanted.numel(), depth()}, torch::dtype(torch::kChar));
    const int64_t* id = wanted.data_ptr<int64_t>();
    int8_t* o = out.data_ptr<int8_t>();
    for (int64_t i = 0; i < wanted.numel(); ++i) {
      if (id[i] < 0 || id[i] >= rows())
        throw Error("int8 rows: row " + std::to_string(id[i]) + " of " + std::to_string(rows()));
      packed_.unpack_row(id[i], o + i * depth());
    }
    return out;
  }

  PackedInt8Weight packed_;
  torch::Tensor scales_;  // [N] float
};

// The quantized operators through the dispatcher's boxed calls: their packed-weight
// class lives in headers that moved between LibTorch 1.13 and 2.x, the boxed calls did not.
c10::IValue call_boxed(const c10::OperatorHandle& op, std::vector<c10::IValue> stack) {
  op.callBoxed(&stack);
  return stack.at(0);
}

// LibTorch's quantized engine: the int8 values stay, each row range (with its bias) is
// prepacked once, on first use.
class Int8LibTorchKernel : public ProjectionKernel {
 public:
  explicit Int8LibTorchKernel(const Int8Weight& weight)
      : values_(weight.values.contiguous()),
        scales_(weight.scales.to(torch::kFloat).contiguous()),
        engine_(select_quantized_engine() +
                (int8_activations_reduced() ? " (7-bit activations: this CPU has no VNNI)" : "")) {}

  Precision precision() const override { return Precision::int8; }
  int64_t rows() const override { return values_.size(0); }
  int64_t depth() const override { return values_.size(1); }

  torch::Tensor multiply(const torch::Tensor& x, const torch::Tensor& bias, int64_t first,
                         int64_t count) const override {
    const c10::IValue packed = pack(first, count, bias);
    // 8-bit activations overflow the int16 pair sums of a CPU without VNNI (2 x 255 x 128):
    // on an AVX2-only CPU the step scores were off by up to 5 nats and most translations
    // changed; with 7 bits the largest pair sum (2 x 127 x 128) fits.
    static const bool reduce_range = int8_activations_reduced();
    const torch::Tensor flat = x.reshape({-1, x.size(-1)}).contiguous();
    static const c10::OperatorHandle dynamic =
        c10::Dispatcher::singleton().findSchemaOrThrow("quantized::linear_dynamic", "");
    torch::Tensor y = call_boxed(dynamic, {flat, packed, reduce_range}).toTensor();
    std::vector<int64_t> shape = x.sizes().vec();
    shape.back() = count;
    return y.view(shape);
  }
  torch::Tensor embedding(const torch::Tensor& ids) const override {
    return dequantized_rows(values_.index_select(0, ids.reshape(-1)), scales_, ids);
  }
  std::shared_ptr<const ProjectionKernel> select_rows(const torch::Tensor& ids) const override {
    return std::make_shared<Int8LibTorchKernel>(Int8Weight{values_.index_select(0, ids), scales_.index_select(0, ids)});
  }
  torch::Tensor stored_weight() const override { return values_; }
  torch::Tensor scales() const override { return scales_; }
  std::string engine() const override { return engine_; }

 private:
  // quantized::linear_prepack of rows [first, first + count) with `bias`.
  c10::IValue pack(int64_t first, int64_t count, const torch::Tensor& bias) const {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto key = std::make_tuple(first, count, bias.defined() ? bias.data_ptr() : nullptr);
    const auto it = packed_.find(key);
    if (it != packed_.end()) return it->second;
    const torch::Tensor scales = scales_.narrow(0, first, count).to(torch::kDouble);
    // The quantized tensor views the int8 values in place (the engines keep it beside their
    // packed form): a copy held every int8 weight a third time.
    const torch::Tensor rows_values = values_.narrow(0, first, count).contiguous();
    const torch::Tensor quantized = at::from_blob_quantized_per_channel_affine(
        rows_values.data_ptr(), rows_values.sizes(), [keep = rows_values](void*) {}, scales,
        torch::zeros({count}, torch::kLong), /*axis=*/0, torch::dtype(torch::kQInt8));
    c10::optional<torch::Tensor> packed_bias;
    if (bias.defined()) {
      packed_bias = bias.to(torch::kFloat).contiguous();
      packed_biases_.push_back(bias);
    }
    static const c10::OperatorHandle prepack =
        c10::Dispatcher::singleton().findSchemaOrThrow("quantized::linear_prepack", "");
    c10::IValue packed = call_boxed(prepack, {quantized, packed_bias});
    packed_.emplace(key, packed);
    return packed;
  }

  torch::Tensor values_;  // [N, K] int8
  torch::Tensor scales_;  // [N] float
  std::string engine_;
  mutable std::mutex mutex_;
  mutable std::map<std::tuple<int64_t, int64_t, const void*>, c10::IValue> packed_;
  mutable std::vector<torch::Tensor> packed_biases_;  // keeps the biases' addresses valid as keys
};

ProjectionKind int8_kind() {
  ProjectionKind kind;
  kind.precision = Precision::int8;
  kind.convert = [](const torch::Tensor& weight) { return int8_kernel(quantize_per_row(weight), int8_engine()); };
  kind.restore = [](const torch::Tensor& stored, const torch::Tensor& scales) {
    if (!scales.defined() || scales.dim() != 1 || scales.size(0) != stored.size(0))
      throw Error("int8 weight: values or scales do not fit the layer");
    return int8_kernel({stored, scales}, int8_engine());
  };
  kind.stored_type = torch::kChar;
  kind.stored_with_scales = true;
  kind.on_cuda = false;
  kind.fast_cpu_flag = "avx512_vnni";
  kind.without_cpu_flag = [] { return std::string("; int8 products are emulated and may be slower than fp32"); };
  return kind;
}

const core::Registrar<ProjectionKind> register_int8(projection_kinds(), precision_name(Precision::int8), int8_kind());

}  // namespace

Int8Weight quantize_per_row(const torch::Tensor& weight) {
  torch::NoGradGuard no_grad;
  TORCH_CHECK(weight.dim() == 2 && weight.scalar_type() == torch::kFloat, "quantize_per_row: a float matrix");
  const torch::Tensor scales = (weight.abs().amax(1) / 127.0).clamp_min(1e-12);
  const torch::Tensor values = torch::round(weight / scales.unsqueeze(1)).clamp(-127, 127).to(torch::kChar);
  return {values, scales};
}

Int8Engine int8_engine() {
  static const Int8Engine engine = [] {
    return int8_gemm_available() && core::kernel_switch("CSAN_INT8_KERNEL") != "libtorch" ? Int8Engine::csan_vnni
                                                                                           : Int8Engine::libtorch;
  }();
  return engine;
}

std::shared_ptr<const ProjectionKernel> int8_kernel(const Int8Weight& weight, Int8Engine engine) {
  if (weight.values.scalar_type() != torch::kChar || weight.values.dim() != 2 || weight.scales.dim() != 1 ||
      weight.scales.size(0) != weight.values.size(0))
    throw Error("int8 weight: values or scales do not fit the layer");
  if (engine == Int8Engine::csan_vnni) return std::make_shared<Int8VnniKernel>(weight);
  return std::make_shared<Int8LibTorchKernel>(weight);
}

bool int8_activations_reduced() {
  return !(core::cpu_has("avx512_vnni") || core::cpu_has("avx_vnni") || core::cpu_has("amx_int8"));
}

std::string select_quantized_engine() {
  const auto& supported = at::globalContext().supportedQEngines();
  auto has = [&](at::QEngine e) { return std::find(supported.begin(), supported.end(), e) != supported.end(); };
  std::vector<std::pair<at::QEngine, std::string>> preference;
#if TORCH_VERSION_MAJOR >= 2
  preference.emplace_back(at::QEngine::X86, "x86");  // fbgemm and onednn, chosen per shape (LibTorch 2.x)
#endif
  preference.emplace_back(at::QEngine::FBGEMM, "fbgemm");
  // onednn per-channel: 1.44x fp32 at [320 x 512] x [512 x 2048] here; per-tensor 2x
  // slower than fp32; qnnpack 2.0-2.7x slower than fp32.
  preference.emplace_back(at::QEngine::ONEDNN, "onednn");
  preference.emplace_back(at::QEngine::QNNPACK, "qnnpack");
  for (const auto& [engine, name] : preference)
    if (has(engine)) {
      at::globalContext().setQEngine(engine);
      return name;
    }
  throw Error("--precision int8: this LibTorch has no quantized engine (fbgemm, onednn or qnnpack)");
}

}  // namespace csan::nn
