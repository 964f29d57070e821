#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <set>

#include "toolkit/checkpoint/format3.h"
#include "toolkit/checkpoint/optimizer_state.h"
#include "toolkit/checkpoint/stored_tensor.h"
#include "toolkit/core/error.h"
#include "toolkit/safetensors/dtype.h"
#include "toolkit/safetensors/header.h"
#include "toolkit/safetensors/reader.h"

namespace csan::checkpoint::format3 {

namespace {

using nlohmann::json;

bool starts_with(const std::string& s, const std::string& prefix) { return s.compare(0, prefix.size(), prefix) == 0; }

bool is_floating(torch::ScalarType t) { return torch::isFloatingType(t); }

class Format3 : public StoredCheckpoint {
 public:
  explicit Format3(std::shared_ptr<const safetensors::Reader> reader) : reader_(std::move(reader)) {}

  void load_model(torch::nn::Module& model, bool adopt) override {
    torch::NoGradGuard no_grad;
    for (auto& p : model.named_parameters(/*recurse=*/true)) load_tensor(p.key(), p.value(), adopt);
    for (auto& b : model.named_buffers(/*recurse=*/true)) load_tensor(b.key(), b.value(), adopt);
  }

  void load_optimizer(torch::optim::Optimizer& optimizer, const std::vector<std::string>& names) override {
    const auto& meta = reader_->metadata();
    const auto json_text = meta.find(kOptimizer);
    if (json_text == meta.end()) fail("has no optimizer state (no __metadata__ key '" + std::string(kOptimizer) + "')");
    checkpoint::load_optimizer(optimizer, names, json_text->second, tensors_under(""), reader_->path());
  }

  bool has_optimizer() override { return reader_->metadata().count(kOptimizer) > 0; }

  std::optional<SectionReader> section(const std::string& name) override {
    if (!sections_.count(name)) return std::nullopt;
    return tensors_under(kSectionPrefix + name + ".", "section '" + name + "'");
  }

  std::vector<std::string> section_names() override { return {sections_.begin(), sections_.end()}; }

  bool rng_state(const std::string& generator, torch::Tensor& state) override {
    const auto* view = reader_->find(kRngPrefix + generator);
    if (!view) return false;
    if (view->dtype != safetensors::Dtype::kU8) fail("tensor '" + view->name + "' is not U8");
    state = copy_of(*view, reader_->path());
    return true;
  }

  void set_sections(std::set<std::string> names) { sections_ = std::move(names); }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(reader_->path() + ": " + what, ErrorKind::corrupt_checkpoint);
  }

  // Tensors named PREFIX + key, copied out (the caller may write them).
  SectionReader tensors_under(const std::string& prefix, const std::string& what = "") const {
    auto reader = reader_;
    return SectionReader(
        reader_->path() + (what.empty() ? "" : ": " + what),
        [reader, prefix](const std::string& key, torch::Tensor& value) {
          const auto* view = reader->find(prefix + key);
          if (!view) return false;
          value = copy_of(*view, reader->path());
          return true;
        },
        [reader, prefix] {
          std::vector<std::string> keys;
          for (const auto& view : reader->tensors())
            if (starts_with(view.name, prefix)) keys.push_back(view.name.substr(prefix.size()));
          return keys;
        });
  }

  void load_tensor(const std::string& name, torch::Tensor& target, bool adopt) const {
    const std::string doesnt_fit = "the weights do not fit this model (";
    const safetensors::TensorView* view = reader_->find(name);
    if (!view) fail(doesnt_fit + "no tensor '" + name + "' in the file; different architecture or vocabulary?)");
    const std::vector<int64_t> model_shape(target.sizes().begin(), target.sizes().end());
    if (view->shape != model_shape)
      fail(doesnt_fit + "tensor '" + name + "' is " + safetensors::shape_text(view->shape) + " in the file, " +
           safetensors::shape_text(model_shape) + " in the model; different architecture or vocabulary?)");
    const auto stored_type = torch_type(view->dtype);
    const torch::ScalarType model_type = target.scalar_type();
    // Floating-point weights convert (a bf16 run's checkpoint decodes in fp32); integer,
    // boolean and int8 tensors must be stored as the model holds them.
    if (!stored_type || (*stored_type != model_type && !(is_floating(*stored_type) && is_floating(model_type))))
      fail(doesnt_fit + "tensor '" + name + "' is " + std::string(safetensors::dtype_name(view->dtype)) +
           " in the file, " + std::string(safetensors::dtype_name(stored_dtype(model_type, name))) + " in the model)");
    const bool usable_in_place = view->aligned();
    const bool adoptable =
        adopt && usable_in_place && *stored_type == model_type && target.device().is_cpu() &&
        (model_type == torch::kFloat || model_type == torch::kBFloat16 || model_type == torch::kChar);
    if (adoptable) {
      target.set_data(in_place(*view, reader_->mapping(), reader_->path()));
      return;
    }
    const torch::Tensor stored =
        usable_in_place ? in_place(*view, reader_->mapping(), reader_->path()) : copy_of(*view, reader_->path());
    if (!target.is_contiguous()) {  // stride-0 placeholders of a model built for conversion
      target.set_data(stored.to(target.options(), /*non_blocking=*/false, /*copy=*/true).contiguous());
    } else {
      target.copy_(stored);
    }
  }

  std::shared_ptr<const safetensors::Reader> reader_;
  std::set<std::string> sections_;
};

const std::string& required(const safetensors::Reader& reader, const char* key) {
  const auto found = reader.metadata().find(key);
  if (found == reader.metadata().end())
    throw Error(reader.path() + ": __metadata__ has no '" + key + "' (not a csan checkpoint, or damaged)",
                ErrorKind::corrupt_checkpoint);
  return found->second;
}

json parse_json(const safetensors::Reader& reader, const char* key) {
  try {
    return json::parse(required(reader, key));
  } catch (const json::exception& e) {
    throw Error(reader.path() + ": __metadata__ '" + key + "' is not valid JSON (" + e.what() + ")",
                ErrorKind::corrupt_checkpoint);
  }
}

TrainingProgress progress_of(const safetensors::Reader& reader) {
  const json p = parse_json(reader, kProgress);
  try {
    TrainingProgress progress;
    progress.epoch = p.at("epoch").get<int64_t>();
    progress.next_batch = p.at("next_batch").get<int64_t>();
    progress.num_updates = p.at("num_updates").get<int64_t>();
    const json& best = p.at("best_metric");
    // A finite double as a JSON number (nlohmann writes the shortest text that reads back
    // exactly), inf and nan as text.
    progress.best_metric =
        best.is_string() ? std::strtod(best.get<std::string>().c_str(), nullptr) : best.get<double>();
    progress.has_best = p.at("has_best").get<bool>();
    progress.bad_validations = p.at("bad_validations").get<int64_t>();
    progress.nan_streak = p.at("nan_streak").get<int64_t>();
    progress.lr_schedule_start = p.value("lr_schedule_start", int64_t{0});  // written since --reset-lr-scheduler
    return progress;
  } catch (const json::exception& e) {
    throw Error(
        reader.path() + ": __metadata__ '" + kProgress + "' is not the progress record csan writes (" + e.what() + ")",
        ErrorKind::corrupt_checkpoint);
  }
}

}  // namespace

OpenedCheckpoint open(const std::string& path) {
  std::shared_ptr<const safetensors::Reader> reader;
  try {
    reader = std::make_shared<const safetensors::Reader>(path, safetensors::ChecksumPolicy::kRequire);
  } catch (const Error& e) {
    // The file layer's refusals (truncation, checksum, header) say why a checkpoint cannot
    // be read as one: front ends that tell failures apart (csan.CorruptCheckpointError) need that kind.
    if (e.kind() != ErrorKind::general) throw;
    throw Error(e.what(), ErrorKind::corrupt_checkpoint);
  }
  const std::string& version = required(*reader, kFormat);
  if (version != std::to_string(kFormatVersion))
    throw Error(path + ": checkpoint format '" + version + "' is not supported (this csan reads 1, 2 and " +
                    std::to_string(kFormatVersion) + ")",
                ErrorKind::corrupt_checkpoint);
  OpenedCheckpoint opened;
  opened.format_version = kFormatVersion;
  opened.meta.task = required(*reader, kTask);
  opened.meta.recipe_yaml = required(*reader, kRecipe);
  const auto run_info = reader->metadata().find(kRunInfo);
  if (run_info != reader->metadata().end()) opened.meta.run_info = run_info->second;
  for (const auto& [key, value] : reader->metadata())
    if (starts_with(key, kDataPrefix)) opened.meta.data[key.substr(std::string(kDataPrefix).size())] = value;
  for (const auto& view : reader->tensors()) {
    if (!starts_with(view.name, kBinaryDataPrefix)) continue;
    if (view.dtype != safetensors::Dtype::kU8 || view.shape.size() != 1)
      throw Error(path + ": tensor '" + view.name + "' is not U8 [n] (the bytes of a data entry)",
                  ErrorKind::corrupt_checkpoint);
    opened.meta.data[view.name.substr(std::string(kBinaryDataPrefix).size())] = std::string(view.data, view.size);
  }
  opened.progress = progress_of(*reader);
  std::set<std::string> sections;
  const json names = parse_json(*reader, kSections);
  if (!names.is_array()) throw Error(path + ": __metadata__ '" + kSections + "' is not a JSON list");
  for (const auto& name : names) {
    if (!name.is_string()) throw Error(path + ": __metadata__ '" + kSections + "' holds a non-string");
    sections.insert(name.get<std::string>());
  }
  auto stored = std::make_unique<Format3>(std::move(reader));
  stored->set_sections(std::move(sections));
  opened.stored = std::move(stored);
  return opened;
}

}  // namespace csan::checkpoint::format3
