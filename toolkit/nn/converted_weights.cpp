#include "toolkit/nn/converted_weights.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/quantized/Quantizer.h>
#include <torch/version.h>

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

#include "toolkit/core/cpu_flags.h"
#include "toolkit/core/error.h"
#include "toolkit/nn/int8_gemm.h"

namespace csan::nn {

namespace {

// What this file knows about one converted storage. It holds the storage, so its
// address is not reused while the entry lives; entries whose storage nobody else holds
// any more (the model is gone) are dropped at the next conversion.
struct Converted {
  c10::Storage storage;
  WeightPrecision precision;
  torch::Tensor scales;  // int8: [rows of the whole storage] float
  int64_t row_length = 0;
  // int8: the prepacked row views, by (first row, rows, bias data): packing reorders the
  // weight for the engine, once per view rather than at every product.
  std::map<std::tuple<int64_t, int64_t, const void*>, c10::IValue> packed;
  std::vector<torch::Tensor> packed_biases;  // keeps the biases' addresses valid as keys
  // int8 on an AVX512-VNNI CPU: the row views reordered for csan's kernel, by (first row,
  // rows); the bias is added by the kernel, so it is not part of the key.
  std::map<std::pair<int64_t, int64_t>, std::shared_ptr<const PackedInt8Weight>> vnni_packed;
  // int8 on csan's kernel, when decoding asked for it (release_packed_int8_values): once
  // every row is packed the plain values are freed (the storage keeps its size and no
  // data), and rows are read back from the packs; `released` says that happened.
  bool release_when_packed = false;
  bool released = false;
};

std::mutex mutex;
std::map<const void*, Converted>& table() {
  static std::map<const void*, Converted> converted;
  return converted;
}

const void* key_of(const torch::Tensor& t) { return t.storage().unsafeGetStorageImpl(); }

// bf16 and fp16 weights: products and lookups in that type, fp32 in and out.
bool is_half_width_float(torch::ScalarType type) { return type == torch::kBFloat16 || type == torch::kHalf; }

void drop_unused_entries() {
  for (auto it = table().begin(); it != table().end();)
    it = it->second.storage.use_count() <= 1 ? table().erase(it) : std::next(it);
}

Converted& entry_of(const torch::Tensor& weight) {
  auto it = table().find(key_of(weight));
  if (it == table().end()) throw Error("internal: a non-float weight that was not converted for inference");
  return it->second;
}

// The first row of a row view [r, K] into its storage.
int64_t first_row(const torch::Tensor& view, int64_t row_length) {
  TORCH_CHECK(view.dim() == 2 && view.is_contiguous() && view.storage_offset() % row_length == 0,
              "converted weights: expected a contiguous row view");
  return view.storage_offset() / row_length;
}

void register_weight(torch::Tensor& weight, WeightPrecision precision, torch::Tensor scales) {
  std::lock_guard<std::mutex> lock(mutex);
  drop_unused_entries();
  Converted c{weight.storage(), precision, std::move(scales), weight.size(1), {}, {}, {}, false, false};
  table().insert_or_assign(key_of(weight), std::move(c));
}

// The quantized operators through the dispatcher's boxed calls: their packed-weight
// class lives in headers that moved between LibTorch 1.13 and 2.x, the boxed calls did not.
c10::IValue call_boxed(const c10::OperatorHandle& op, std::vector<c10::IValue> stack) {
  op.callBoxed(&stack);
  return stack.at(0);
}

// quantized::linear_prepack of rows [first, first + rows) with `bias` (under `mutex`).
c10::IValue pack_rows(Converted& c, const torch::Tensor& values, int64_t first, int64_t rows,
                      const torch::Tensor& bias) {
  auto key = std::make_tuple(first, rows, bias.defined() ? bias.data_ptr() : nullptr);
  auto it = c.packed.find(key);
  if (it != c.packed.end()) return it->second;
  const torch::Tensor scales = c.scales.narrow(0, first, rows).to(torch::kDouble);
  // The quantized tensor views the int8 values in place (the engines keep it beside their
  // packed form): a copy held every int8 weight a third time.
  const torch::Tensor rows_values = values.contiguous();
  const torch::Tensor quantized = at::from_blob_quantized_per_channel_affine(
      rows_values.data_ptr(), rows_values.sizes(), [keep = rows_values](void*) {}, scales,
      torch::zeros({rows}, torch::kLong), /*axis=*/0, torch::dtype(torch::kQInt8));
  c10::optional<torch::Tensor> packed_bias;
  if (bias.defined()) {
    packed_bias = bias.to(torch::kFloat).contiguous();
    c.packed_biases.push_back(bias);
  }
  static const c10::OperatorHandle prepack =
      c10::Dispatcher::singleton().findSchemaOrThrow("quantized::linear_prepack", "");
  c10::IValue packed = call_boxed(prepack, {quantized, packed_bias});
  c.packed.emplace(key, packed);
  return packed;
}

// Rows `ids` [n] int64 of an int8 weight (a view's rows count from the view's first row
// `first`) as int8 [n, K]: from the plain values, or from the packs once they were released
// (under `mutex`).
torch::Tensor int8_rows(const Converted& c, const torch::Tensor& weight, int64_t first, const torch::Tensor& ids) {
  if (!c.released) return weight.index_select(0, ids);
  const torch::Tensor wanted = ids.to(torch::kLong).contiguous();
  torch::Tensor out = torch::empty({wanted.numel(), c.row_length}, torch::dtype(torch::kChar));
  const int64_t* id = wanted.data_ptr<int64_t>();
  int8_t* o = out.data_ptr<int8_t>();
  for (int64_t i = 0; i < wanted.numel(); ++i) {
    const int64_t row = first + id[i];
    // The pack holding the row: the last one starting at or before it.
    auto it = c.vnni_packed.upper_bound({row, std::numeric_limits<int64_t>::max()});
    TORCH_CHECK(id[i] >= 0 && id[i] < weight.size(0) && it != c.vnni_packed.begin(), "int8 rows: row ", id[i], " of ",
                weight.size(0));
    --it;
    TORCH_CHECK(row < it->first.first + it->first.second, "internal: a released int8 row that no pack holds");
    it->second->unpack_row(row - it->first.first, o + i * c.row_length);
  }
  return out;
}

// True when the packs together hold every row of the storage.
bool every_row_packed(const Converted& c) {
  const int64_t total = c.storage.nbytes() / c.row_length;
  int64_t covered = 0;  // rows [0, covered) are packed; keys come sorted by first row
  for (const auto& [key, pack] : c.vnni_packed) {
    if (key.first > covered) return false;
    covered = std::max(covered, key.first + key.second);
  }
  return covered >= total;
}

void release_if_packed(Converted& c) {
  if (!c.release_when_packed || c.released || !every_row_packed(c)) return;
  // The storage keeps its size (views and their offsets stay valid) but holds no data:
  // a read of the plain values now would fault instead of returning stale numbers.
  c.storage.set_data_ptr(c10::DataPtr(nullptr, c.storage.device()));
  c.released = true;
}

// csan's kernel (int8_gemm.h) for rows [first, first + rows) (under `mutex`).
std::shared_ptr<const PackedInt8Weight> vnni_rows(Converted& c, const torch::Tensor& values, int64_t first,
                                                  int64_t rows) {
  auto it = c.vnni_packed.find({first, rows});
  if (it != c.vnni_packed.end()) return it->second;
  const torch::Tensor plain = c.released ? int8_rows(c, values, first, torch::arange(rows)) : values;
  auto packed = std::make_shared<const PackedInt8Weight>(plain, c.scales.narrow(0, first, rows));
  c.vnni_packed.emplace(std::make_pair(first, rows), packed);
  release_if_packed(c);
  return packed;
}

// CSAN_INT8_KERNEL=libtorch sends int8 products to LibTorch's quantized engine even where
// csan's kernel runs: the side-by-side benchmark of the two, and a way around a kernel bug.
bool csan_int8_kernel_used() {
  static const bool used = [] {
    const char* choice = std::getenv("CSAN_INT8_KERNEL");
    return int8_gemm_available() && !(choice && std::string(choice) == "libtorch");
  }();
  return used;
}

thread_local LinearWeightRecorder* recorder = nullptr;

}  // namespace

void convert_weight(torch::Tensor& weight, WeightPrecision precision, bool values_follow) {
  torch::NoGradGuard no_grad;
  TORCH_CHECK(weight.dim() == 2 && weight.scalar_type() == torch::kFloat, "convert_weight: a float matrix");
  weight.set_requires_grad(false);
  if (values_follow) {
    // Untouched memory: the fp32 model is never drawn, and its converted form costs
    // memory only as the checkpoint's values arrive.
    const auto type = precision == WeightPrecision::Bf16   ? torch::kBFloat16
                      : precision == WeightPrecision::Fp16 ? torch::kHalf
                                                           : torch::kChar;
    weight.set_data(torch::empty(weight.sizes(), weight.options().dtype(type)));
    register_weight(weight, precision,
                    precision == WeightPrecision::Int8 ? torch::ones({weight.size(0)}) : torch::Tensor());
    return;
  }
  if (precision == WeightPrecision::Bf16 || precision == WeightPrecision::Fp16) {
    weight.set_data(weight.to(precision == WeightPrecision::Bf16 ? torch::kBFloat16 : torch::kHalf));
    register_weight(weight, precision, {});
    return;
  }
  // Symmetric per-row scales: zero points stay 0, which every engine's per-channel
  // kernel needs; an all-zero row (the padding embedding) keeps a tiny positive scale.
  const torch::Tensor scales = (weight.abs().amax(1) / 127.0).clamp_min(1e-12);
  const torch::Tensor values = torch::round(weight / scales.unsqueeze(1)).clamp(-127, 127).to(torch::kChar);
  weight.set_data(values);
  register_weight(weight, precision, scales);
}

void set_int8_weight(torch::Tensor& weight, const torch::Tensor& values, const torch::Tensor& scales) {
  torch::NoGradGuard no_grad;
  if (values.scalar_type() != torch::kChar || values.sizes() != weight.sizes() || scales.dim() != 1 ||
      scales.size(0) != weight.size(0))
    throw Error("int8 weight: values or scales do not fit the layer");
  // The weight's own values (an inference checkpoint loaded into it) need no copy.
  weight.set_data(values.is_same(weight) ? values.contiguous() : values.contiguous().clone());
  register_weight(weight, WeightPrecision::Int8, scales.to(torch::kFloat).contiguous().clone());
}

torch::Tensor int8_scales(const torch::Tensor& weight) {
  std::lock_guard<std::mutex> lock(mutex);
  const Converted& c = entry_of(weight);
  if (c.precision != WeightPrecision::Int8) throw Error("internal: int8_scales of a weight that is not int8");
  return c.scales;
}

bool is_converted(const torch::Tensor& weight) {
  if (weight.scalar_type() == torch::kFloat) return false;
  std::lock_guard<std::mutex> lock(mutex);
  return table().count(key_of(weight)) > 0;
}

bool has_converted_weights(const torch::nn::Module& module) {
  for (const auto& p : module.parameters())
    if (is_converted(p)) return true;
  return false;
}

bool bf16_products_emulated() {
  static const bool emulated = !(core::cpu_has("avx512bw") && core::cpu_has("avx512vl") && core::cpu_has("avx512dq"));
  return emulated;
}

torch::Tensor bf16_linear_in_fp32(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias) {
  const auto rounded = [](const torch::Tensor& t) { return t.to(torch::kBFloat16).to(torch::kFloat); };
  return rounded(at::linear(rounded(x), weight.to(torch::kFloat), bias.defined() ? rounded(bias) : bias));
}

torch::Tensor converted_linear(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias) {
  if (weight.scalar_type() == torch::kBFloat16 && x.device().is_cpu() && bf16_products_emulated())
    return bf16_linear_in_fp32(x, weight, bias);
  if (is_half_width_float(weight.scalar_type())) {
    const torch::Tensor b = bias.defined() ? bias.to(weight.scalar_type()) : bias;
    // at::linear adds the bias inside the GEMM for any rank (one bf16 rounding);
    // torch::nn::functional::linear adds it afterwards for 3-D inputs (two).
    return at::linear(x.to(weight.scalar_type()), weight, b).to(x.scalar_type());
  }
  if (csan_int8_kernel_used()) {
    std::shared_ptr<const PackedInt8Weight> packed;
    {
      std::lock_guard<std::mutex> lock(mutex);
      Converted& c = entry_of(weight);
      packed = vnni_rows(c, weight, first_row(weight, c.row_length), weight.size(0));
    }
    return int8_gemm(x, *packed, bias.defined() ? bias.to(torch::kFloat) : bias);
  }
  return libtorch_int8_linear(x, weight, bias);
}

torch::Tensor libtorch_int8_linear(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias) {
  c10::IValue packed;
  {
    std::lock_guard<std::mutex> lock(mutex);
    Converted& c = entry_of(weight);
    packed = pack_rows(c, weight, first_row(weight, c.row_length), weight.size(0), bias);
  }
  // 8-bit activations overflow the int16 pair sums of a CPU without VNNI (2 x 255 x 128):
  // on an AVX2-only CPU the step scores were off by up to 5 nats and most translations
  // changed; with 7 bits the largest pair sum (2 x 127 x 128) fits.
  static const bool reduce_range = int8_activations_reduced();
  const torch::Tensor flat = x.reshape({-1, x.size(-1)}).contiguous();
  static const c10::OperatorHandle dynamic =
      c10::Dispatcher::singleton().findSchemaOrThrow("quantized::linear_dynamic", "");
  torch::Tensor y = call_boxed(dynamic, {flat, packed, reduce_range}).toTensor();
  std::vector<int64_t> shape = x.sizes().vec();
  shape.back() = weight.size(0);
  return y.view(shape);
}

// An int8 weight's rows `ids` (any shape) as int8 [..., K], wherever its values live now.
torch::Tensor int8_weight_rows(const torch::Tensor& weight, const torch::Tensor& ids) {
  std::lock_guard<std::mutex> lock(mutex);
  const Converted& c = entry_of(weight);
  std::vector<int64_t> shape = ids.sizes().vec();
  shape.push_back(weight.size(1));
  return int8_rows(c, weight, first_row(weight, c.row_length), ids.reshape(-1)).view(shape);
}

torch::Tensor converted_embedding(const torch::Tensor& weight, const torch::Tensor& tokens) {
  if (is_half_width_float(weight.scalar_type())) return torch::embedding(weight, tokens).to(torch::kFloat);
  const torch::Tensor scales = int8_scales(weight);
  const torch::Tensor rows = int8_weight_rows(weight, tokens).to(torch::kFloat);
  return rows * torch::embedding(scales.unsqueeze(1), tokens);
}

void release_packed_int8_values(const torch::nn::Module& module) {
  if (!csan_int8_kernel_used()) return;  // LibTorch's engine keeps reading them
  std::lock_guard<std::mutex> lock(mutex);
  for (const auto& p : module.parameters()) {
    if (p.scalar_type() != torch::kChar) continue;
    auto it = table().find(key_of(p));
    if (it == table().end() || it->second.precision != WeightPrecision::Int8) continue;
    it->second.release_when_packed = true;
    release_if_packed(it->second);  // an inference checkpoint's recording pass packed it already
  }
}

bool int8_values_released(const torch::Tensor& weight) {
  std::lock_guard<std::mutex> lock(mutex);
  auto it = table().find(key_of(weight));
  return it != table().end() && it->second.released;
}

torch::Tensor select_weight_rows(const torch::Tensor& weight, const torch::Tensor& rows) {
  if (weight.scalar_type() == torch::kChar && is_converted(weight)) {
    torch::Tensor selected = int8_weight_rows(weight, rows);
    register_weight(selected, WeightPrecision::Int8, int8_scales(weight).index_select(0, rows));
    return selected;
  }
  torch::Tensor selected = weight.index_select(0, rows);
  if (weight.scalar_type() == torch::kFloat || !is_converted(weight)) return selected;
  register_weight(selected, weight.scalar_type() == torch::kBFloat16 ? WeightPrecision::Bf16 : WeightPrecision::Fp16,
                  {});
  return selected;
}

LinearWeightRecorder::LinearWeightRecorder(bool skip_products) : skip_products_(skip_products), previous_(recorder) {
  recorder = this;
}

bool LinearWeightRecorder::products_skipped() { return recorder && recorder->skip_products_; }
LinearWeightRecorder::~LinearWeightRecorder() { recorder = previous_; }

void LinearWeightRecorder::note(const torch::Tensor& weight) {
  if (recorder) recorder->weights_.insert(key_of(weight));
}

bool LinearWeightRecorder::is_weight(const torch::Tensor& parameter) const {
  return weights_.count(key_of(parameter)) > 0;
}

bool int8_activations_reduced() {
  return !(core::cpu_has("avx512_vnni") || core::cpu_has("avx_vnni") || core::cpu_has("amx_int8"));
}

std::string select_int8_products() {
  if (csan_int8_kernel_used()) return "csan avx512-vnni";
  return select_quantized_engine();
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
  // slower than fp32; qnnpack 2.0-2.7x slower than fp32 (measured 2026-11-25).
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
