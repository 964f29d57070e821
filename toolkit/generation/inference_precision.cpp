#include "toolkit/generation/inference_precision.h"

#include <set>

#include "toolkit/core/error.h"
#include "toolkit/nn/compute_device.h"
#include "toolkit/nn/converted_weights.h"

namespace csan::generation {

namespace {

bool cpu_supports(const std::string& precision) {
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
  __builtin_cpu_init();
  if (precision == "bf16") return __builtin_cpu_supports("avx512bf16");
  if (precision == "int8") return __builtin_cpu_supports("avx512vnni");
  return true;
#else
  return precision == "fp32";
#endif
}

// `name` is `prefix` or lies under it ("decoder.layers.0" covers "decoder.layers.0.ffn.fc1.weight").
bool covers(const std::string& prefix, const std::string& name) {
  return name == prefix || (name.size() > prefix.size() && name.compare(0, prefix.size(), prefix) == 0 &&
                            (prefix.back() == '.' || name[prefix.size()] == '.'));
}

std::string join(const std::vector<std::string>& items, size_t at_most) {
  std::string joined;
  for (size_t i = 0; i < items.size() && i < at_most; ++i) joined += (i ? ", " : "") + items[i];
  if (items.size() > at_most) joined += ", ... (" + std::to_string(items.size()) + " in all)";
  return joined;
}

}  // namespace

void validate(const InferencePrecision& p) {
  if (p.name == "amp") throw Error("--precision: amp is for training; GPU decoding takes fp16 or bf16");
  if (p.name == "fp16" && !torch::cuda::is_available())
    throw Error("--precision: fp16 needs a CUDA device; CPU decoding takes fp32, bf16 or int8");
  if (p.name != "fp32" && p.name != "bf16" && p.name != "int8" && p.name != "fp16")
    throw Error("--precision: unknown value '" + p.name + "' (fp32, bf16, int8; fp16 on a GPU)");
  if (!p.quantize_skip.empty() && p.name == "fp32")
    throw Error("--quantize-skip: only with --precision bf16 or int8 (every layer is fp32 already)");
  for (const auto& s : p.quantize_skip)
    if (s.empty()) throw Error("--quantize-skip: empty layer name");
}

std::string missing_cpu_flag_warning(const std::string& precision, bool has_flag) {
  if (has_flag || precision == "fp32") return "";
  const std::string flag = precision == "bf16" ? "avx512_bf16" : "avx512_vnni";
  if (precision == "bf16" && nn::bf16_products_emulated())
    return "warning: --precision bf16: this CPU lacks " + flag +
           " and AVX-512; bf16 products are emulated in fp32 (bf16's roundings, no speed gain)";
  return "warning: --precision " + precision + ": this CPU lacks " + flag + "; " + precision +
         " products are emulated and may be slower than fp32";
}

std::string missing_cpu_flag_warning(const std::string& precision) {
  return missing_cpu_flag_warning(precision, cpu_supports(precision));
}

ConversionReport convert_for_inference(models::EncoderDecoderModel& model, const InferencePrecision& precision,
                                       int64_t vocab_token, bool values_follow) {
  validate(precision);
  ConversionReport report;
  if (precision.name == "fp32") return report;
  const torch::Device device = nn::device_of(model);
  if (precision.name == "fp16" && !device.is_cuda())
    throw Error("--precision: fp16 needs a CUDA device; this model is on the CPU (--cpu?)");
  if (precision.name == "int8" && !device.is_cpu())
    throw Error("--precision: int8 runs on the CPU; add --cpu (a GPU decodes fp16 or bf16)");
  torch::NoGradGuard no_grad;
  model.eval();
  // Undrawn weights (values_follow) are not read: the recording pass's products are zeros.
  nn::LinearWeightRecorder recorder(/*skip_products=*/values_follow);
  {
    const auto long_on_device = torch::dtype(torch::kLong).device(device);
    const auto tokens = torch::full({1, 2}, vocab_token, long_on_device);
    model.forward(tokens, torch::full({1}, 2, long_on_device), tokens);
  }
  const auto mode = precision.name == "bf16"   ? nn::WeightPrecision::Bf16
                    : precision.name == "fp16" ? nn::WeightPrecision::Fp16
                                               : nn::WeightPrecision::Int8;
  std::set<const void*> seen;  // a tied weight is listed under two names
  std::vector<std::pair<std::string, torch::Tensor>> weights;
  for (auto& p : model.named_parameters()) {
    torch::Tensor& t = p.value();
    if (!seen.insert(t.storage().unsafeGetStorageImpl()).second) continue;
    if (nn::is_converted(t)) {
      report.converted.push_back(p.key());  // an inference checkpoint's, converted when it was written
      continue;
    }
    if (t.scalar_type() != torch::kFloat) continue;
    if (recorder.is_weight(t) && t.dim() == 2) weights.emplace_back(p.key(), t);
  }
  std::vector<std::string> names;
  for (const auto& w : weights) names.push_back(w.first);
  for (const auto& skip : precision.quantize_skip) {
    bool any = false;
    for (const auto& n : names) any = any || covers(skip, n);
    if (!any)
      throw Error("--quantize-skip: '" + skip + "' names no projection of this model (projections: " + join(names, 12) +
                  ")");
  }
  auto skipped = [&](const std::string& name) {
    for (const auto& s : precision.quantize_skip)
      if (covers(s, name)) return true;
    return false;
  };
  if (mode == nn::WeightPrecision::Int8) report.engine = nn::select_int8_products();
  for (auto& [name, weight] : weights) {
    if (skipped(name)) {
      report.skipped.push_back(name);
      continue;
    }
    nn::convert_weight(weight, mode, values_follow);
    report.converted.push_back(name);
  }
  return report;
}

void convert_ensemble(const std::vector<std::shared_ptr<models::EncoderDecoderModel>>& models,
                      const InferencePrecision& precision, int64_t vocab_token, std::ostream& log) {
  validate(precision);
  if (precision.name == "fp32") return;
  ConversionReport report;
  for (const auto& m : models) {
    // Decoding needs only the kernel's packed form of an int8 weight: each frees its plain
    // values as soon as it is packed. Asked before the conversion too, for an inference
    // checkpoint's weights, which the conversion's recording pass packs (one at a time
    // rather than all of them twice).
    const bool int8 = precision.name == "int8";
    if (int8) nn::release_packed_int8_values(*m);
    report = convert_for_inference(*m, precision, vocab_token);
    if (int8) nn::release_packed_int8_values(*m);
  }
  const std::string warning =
      nn::device_of(*models.front()).is_cpu() ? missing_cpu_flag_warning(precision.name) : std::string();
  if (!warning.empty()) log << warning << "\n";
  log << "precision " << precision.name << ": " << report.converted.size() << " projection(s) per model in "
      << precision.name;
  if (!report.skipped.empty()) log << ", " << report.skipped.size() << " kept fp32 (" << join(report.skipped, 4) << ")";
  if (!report.engine.empty())
    log << ", int8 products: " << report.engine
        << (nn::int8_activations_reduced() ? " (7-bit activations: this CPU has no VNNI)" : "");
  log << "\n";
}

}  // namespace csan::generation
