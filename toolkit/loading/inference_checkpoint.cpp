#include "toolkit/loading/inference_checkpoint.h"

#include <sstream>

#include "toolkit/core/error.h"
#include "toolkit/loading/model_loader.h"
#include "toolkit/models/encoder_decoder_model.h"
#include "toolkit/nn/converted_weights.h"

namespace csan::loading {

namespace {

constexpr const char* kPrecisionKey = "inference_precision";
constexpr const char* kSkipKey = "quantize_skip";
constexpr const char* kScalesSection = "int8_scales";
// Any id of a dictionary (fairseq's </s>): the recording pass needs a valid token.
constexpr int64_t kRecordingToken = 2;

// Archive keys cannot hold '.', which nests archives.
std::string archive_key(const std::string& parameter) {
  std::string key = parameter;
  for (char& c : key)
    if (c == '.') c = '|';
  return key;
}

models::EncoderDecoderModel& encoder_decoder(models::Model& model, const std::string& path) {
  auto* m = dynamic_cast<models::EncoderDecoderModel*>(&model);
  if (!m) throw Error(path + ": convert-checkpoint supports encoder-decoder (translation) models only");
  return *m;
}

generation::InferencePrecision stored_precision(const checkpoint::CheckpointMeta& meta) {
  generation::InferencePrecision p;
  p.name = meta.get(kPrecisionKey);
  std::istringstream skip(meta.get(kSkipKey));
  for (std::string s; skip >> s;) p.quantize_skip.push_back(s);
  return p;
}

}  // namespace

std::string inference_precision_of(const checkpoint::CheckpointMeta& meta) { return meta.get(kPrecisionKey); }

void write_inference_checkpoint(const std::string& input, const std::string& output,
                                const generation::InferencePrecision& precision, const DescribeModel& describe) {
  generation::validate(precision);
  if (precision.name != "bf16" && precision.name != "int8")
    throw Error("--precision: convert-checkpoint writes bf16 or int8");
  checkpoint::CheckpointReader reader(input);
  if (!inference_precision_of(reader.meta()).empty())
    throw Error(input + ": already an inference-only checkpoint (" + inference_precision_of(reader.meta()) + ")");
  LoadedModel loaded = load_model(reader, describe);
  auto& model = encoder_decoder(*loaded.model, input);
  const auto report = generation::convert_for_inference(model, precision, kRecordingToken);
  checkpoint::CheckpointMeta meta = reader.meta();
  meta.data[kPrecisionKey] = precision.name;
  std::string skip;
  for (const auto& s : precision.quantize_skip) skip += (skip.empty() ? "" : " ") + s;
  meta.data[kSkipKey] = skip;
  checkpoint::CheckpointWriter writer;
  writer.set_meta(meta);
  writer.set_progress(reader.progress());
  writer.set_model(model);
  if (precision.name == "int8") {
    auto& scales = writer.section(kScalesSection);
    auto parameters = model.named_parameters();
    for (const auto& name : report.converted) scales.write(archive_key(name), nn::int8_scales(parameters[name]));
  }
  writer.write(output);
}

void prepare_for_inference_checkpoint(models::Model& model, checkpoint::CheckpointReader& reader) {
  const auto precision = stored_precision(reader.meta());
  if (precision.name.empty()) return;
  // The recording pass does not read the undrawn fp32 weights (its products are zeros), and
  // none is quantized: the checkpoint's values follow.
  generation::convert_for_inference(encoder_decoder(model, reader.path()), precision, kRecordingToken,
                                    /*values_follow=*/true);
}

void restore_inference_checkpoint(models::Model& model, checkpoint::CheckpointReader& reader) {
  if (stored_precision(reader.meta()).name != "int8") return;
  auto scales = reader.section(kScalesSection);
  for (auto& p : model.named_parameters()) {
    if (p.value().scalar_type() != torch::kChar) continue;
    torch::Tensor stored;
    if (!scales.try_read(archive_key(p.key()), stored))
      throw Error(reader.path() + ": int8 parameter " + p.key() + " has no scales (corrupt checkpoint?)");
    nn::set_int8_weight(p.value(), p.value(), stored);
  }
}

}  // namespace csan::loading
