#include "toolkit/loading/inference_checkpoint.h"

#include <sstream>

#include "toolkit/core/error.h"
#include "toolkit/loading/model_loader.h"
#include "toolkit/models/encoder_decoder_model.h"
#include "toolkit/nn/projection_kind.h"

namespace csan::loading {

namespace {

constexpr const char* kPrecisionKey = "inference_precision";
constexpr const char* kSkipKey = "quantize_skip";
constexpr const char* kScalesSection = "int8_scales";

models::EncoderDecoderModel& encoder_decoder(models::Model& model, const std::string& path) {
  auto* m = dynamic_cast<models::EncoderDecoderModel*>(&model);
  if (!m) throw Error(path + ": convert-checkpoint supports encoder-decoder (translation) models only");
  return *m;
}

std::string checkpointable_precisions() {
  std::string names;
  for (const nn::Precision p : nn::kPrecisions)
    if (nn::projection_kinds().contains(nn::precision_name(p)) && nn::projection_kind(p).restore)
      names += (names.empty() ? "" : " or ") + std::string(nn::precision_name(p));
  return names;
}

}  // namespace

std::optional<generation::InferencePrecision> inference_precision_of(const checkpoint::CheckpointReader& reader) {
  const std::string stored = reader.meta().get(kPrecisionKey);
  if (stored.empty()) return std::nullopt;
  generation::InferencePrecision p;
  p.precision = nn::parse_precision(stored, reader.path() + ": " + kPrecisionKey);
  std::istringstream skip(reader.meta().get(kSkipKey));
  for (std::string s; skip >> s;) p.quantize_skip.push_back(s);
  return p;
}

void write_inference_checkpoint(const std::string& input, const std::string& output,
                                const generation::InferencePrecision& precision, const DescribeModel& describe) {
  generation::validate(precision);
  const nn::ProjectionKind& kind = nn::projection_kind(precision.precision);
  if (!kind.restore) throw Error("--precision: convert-checkpoint writes " + checkpointable_precisions());
  checkpoint::CheckpointReader reader(input);
  if (const auto stored = inference_precision_of(reader))
    throw Error(input + ": already an inference-only checkpoint (" + nn::precision_name(stored->precision) + ")");
  LoadedModel loaded = load_model(reader, describe);
  auto& model = encoder_decoder(*loaded.model, input);
  generation::convert_for_inference(model, precision);
  checkpoint::CheckpointMeta meta = reader.meta();
  meta.data[kPrecisionKey] = nn::precision_name(precision.precision);
  std::string skip;
  for (const auto& s : precision.quantize_skip) skip += (skip.empty() ? "" : " ") + s;
  meta.data[kSkipKey] = skip;
  checkpoint::CheckpointWriter writer;
  writer.set_meta(meta);
  writer.set_progress(reader.progress());
  store_converted_projections(model, writer);
  writer.write(output);
}

void store_converted_projections(models::Model& model, checkpoint::CheckpointWriter& writer) {
  // The kernels' weights in their parameters' places, in their stored form: the file
  // holds them under their names (this model is written, not decoded with).
  for (auto& p : nn::projections_of(model)) {
    const auto& kernel = p.site.projection->kernel();
    if (!kernel) continue;
    p.module->set_weight(p.site, kernel->stored_weight());
    if (nn::projection_kind(kernel->precision()).stored_with_scales)
      writer.section(kScalesSection).write(p.name, kernel->scales());
  }
  writer.set_model(model);
}

void prepare_for_inference_checkpoint(models::Model& model, checkpoint::CheckpointReader& reader) {
  const auto precision = inference_precision_of(reader);
  if (!precision) return;
  const nn::ProjectionKind& kind = nn::projection_kind(precision->precision);
  if (!kind.restore)
    throw Error(reader.path() + ": an inference-only " + nn::precision_name(precision->precision) +
                " checkpoint, which this csan cannot load");
  // Untouched memory: the fp32 model is never drawn, and the converted form costs memory
  // only as the checkpoint's values arrive.
  for (auto& p : generation::plan_conversion(encoder_decoder(model, reader.path()), *precision).convert) {
    const torch::Tensor& weight = *p.site.weight;
    p.module->set_weight(p.site, torch::empty(weight.sizes(), weight.options().dtype(kind.stored_type)));
  }
}

void restore_inference_checkpoint(models::Model& model, checkpoint::CheckpointReader& reader) {
  const auto precision = inference_precision_of(reader);
  if (!precision) return;
  const nn::ProjectionKind& kind = nn::projection_kind(precision->precision);
  std::optional<checkpoint::SectionReader> scales;
  if (kind.stored_with_scales) scales = reader.section(kScalesSection);
  for (auto& p : nn::projections_of(model)) {
    const torch::Tensor& stored = *p.site.weight;
    // The projections prepare_for_inference_checkpoint gave the stored type (the others,
    // --quantize-skip's, stay fp32).
    if (!stored.defined() || stored.scalar_type() != kind.stored_type || p.site.projection->kernel()) continue;
    torch::Tensor stored_scales;
    if (scales && !scales->try_read(p.name, stored_scales))
      throw Error(reader.path() + ": " + nn::precision_name(precision->precision) + " parameter " + p.name +
                  " has no scales (corrupt checkpoint?)");
    p.module->convert(p.site, kind.restore(stored, stored_scales));
  }
}

}  // namespace csan::loading
