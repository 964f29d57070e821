#include "toolkit/generation/inference_precision.h"

#include "toolkit/core/cpu_flags.h"
#include "toolkit/core/error.h"
#include "toolkit/nn/compute_device.h"
#include "toolkit/nn/projection_kind.h"

namespace csan::generation {

namespace {

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

// "fp32, bf16 or int8": the precisions whose kind satisfies `wanted`.
template <typename Wanted>
std::string precisions_where(Wanted wanted) {
  std::vector<std::string> names;
  for (const nn::Precision p : nn::kPrecisions)
    if (nn::projection_kinds().contains(nn::precision_name(p)) && wanted(nn::projection_kind(p)))
      names.push_back(nn::precision_name(p));
  std::string joined;
  for (size_t i = 0; i < names.size(); ++i) joined += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return joined;
}

}  // namespace

void validate(const InferencePrecision& p) {
  const nn::ProjectionKind& kind = nn::projection_kind(p.precision);
  const std::string name = nn::precision_name(p.precision);
  if (!kind.on_cpu && !torch::cuda::is_available())
    throw Error("--precision: " + name + " needs a CUDA device; CPU decoding takes " +
                precisions_where([](const nn::ProjectionKind& k) { return k.on_cpu; }),
                ErrorKind::bad_option);
  if (!p.quantize_skip.empty() && !kind.convert)
    throw Error("--quantize-skip: only with --precision " +
                precisions_where([](const nn::ProjectionKind& k) { return bool(k.convert); }) + " (every layer is " +
                    name + " already)",
                ErrorKind::bad_option);
  for (const auto& s : p.quantize_skip)
    if (s.empty()) throw Error("--quantize-skip: empty layer name", ErrorKind::bad_option);
}

std::string missing_cpu_flag_warning(nn::Precision precision, bool has_flag) {
  const nn::ProjectionKind& kind = nn::projection_kind(precision);
  if (has_flag || kind.fast_cpu_flag.empty()) return "";
  return std::string("warning: --precision ") + nn::precision_name(precision) + ": this CPU lacks " +
         kind.fast_cpu_flag + kind.without_cpu_flag();
}

std::string missing_cpu_flag_warning(nn::Precision precision) {
  const nn::ProjectionKind& kind = nn::projection_kind(precision);
  return missing_cpu_flag_warning(precision, kind.fast_cpu_flag.empty() || core::cpu_has(kind.fast_cpu_flag));
}

ConversionPlan plan_conversion(torch::nn::Module& model, const InferencePrecision& precision) {
  ConversionPlan plan;
  std::vector<nn::NamedProjection> candidates;
  for (auto& p : nn::projections_of(model)) {
    if (p.site.projection->kernel()) {
      plan.converted_already.push_back(p);
      continue;
    }
    // A model trained with bf16 weights keeps its own.
    if (p.site.weight->defined() && p.site.weight->scalar_type() == torch::kFloat) candidates.push_back(p);
  }
  std::vector<std::string> names;
  for (const auto& c : candidates) names.push_back(c.name);
  for (const auto& skip : precision.quantize_skip) {
    bool any = false;
    for (const auto& n : names) any = any || covers(skip, n);
    if (!any)
      throw Error("--quantize-skip: '" + skip + "' names no projection of this model (projections: " + join(names, 12) +
                  ")");
  }
  for (auto& c : candidates) {
    bool skipped = false;
    for (const auto& s : precision.quantize_skip) skipped = skipped || covers(s, c.name);
    if (skipped)
      plan.skipped.push_back(c.name);
    else
      plan.convert.push_back(c);
  }
  return plan;
}

ConversionReport convert_for_inference(torch::nn::Module& model, const InferencePrecision& precision) {
  validate(precision);
  ConversionReport report;
  const nn::ProjectionKind& kind = nn::projection_kind(precision.precision);
  if (!kind.convert) return report;
  const std::string name = nn::precision_name(precision.precision);
  const torch::Device device = nn::device_of(model);
  if (!device.is_cuda() && !kind.on_cpu)
    throw Error("--precision: " + name + " needs a CUDA device; this model is on the CPU (--cpu?)");
  if (device.is_cuda() && !kind.on_cuda)
    throw Error("--precision: " + name + " runs on the CPU; add --cpu (a GPU decodes " +
                precisions_where([](const nn::ProjectionKind& k) { return k.on_cuda && bool(k.convert); }) + ")");
  torch::NoGradGuard no_grad;
  model.eval();
  ConversionPlan plan = plan_conversion(model, precision);
  report.skipped = plan.skipped;
  for (const auto& p : plan.converted_already) {
    report.converted.push_back(p.name);
    if (report.engine.empty()) report.engine = p.site.projection->kernel()->engine();
  }
  for (auto& p : plan.convert) {
    // One projection at a time: its float weight is freed as its kernel takes over.
    auto kernel = kind.convert(*p.site.weight);
    if (report.engine.empty()) report.engine = kernel->engine();
    p.module->convert(p.site, std::move(kernel));
    report.converted.push_back(p.name);
  }
  return report;
}

void convert_ensemble(const std::vector<std::shared_ptr<models::EncoderDecoderModel>>& models,
                      const InferencePrecision& precision, std::ostream& log) {
  validate(precision);
  if (!nn::projection_kind(precision.precision).convert) return;
  ConversionReport report;
  for (const auto& m : models) report = convert_for_inference(*m, precision);
  const std::string name = nn::precision_name(precision.precision);
  const std::string warning =
      nn::device_of(*models.front()).is_cpu() ? missing_cpu_flag_warning(precision.precision) : std::string();
  if (!warning.empty()) log << warning << "\n";
  log << "precision " << name << ": " << report.converted.size() << " projection(s) per model in " << name;
  if (!report.skipped.empty()) log << ", " << report.skipped.size() << " kept fp32 (" << join(report.skipped, 4) << ")";
  if (!report.engine.empty()) log << ", " << name << " products: " << report.engine;
  log << "\n";
}

}  // namespace csan::generation
