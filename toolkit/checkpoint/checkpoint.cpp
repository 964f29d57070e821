#include "toolkit/checkpoint/checkpoint.h"

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>

#include "toolkit/checkpoint/format3.h"
#include "toolkit/checkpoint/legacy_archive.h"
#include "toolkit/checkpoint/optimizer_state.h"
#include "toolkit/checkpoint/stored_tensor.h"
#include "toolkit/core/error.h"
#include "toolkit/core/utf8.h"
#include "toolkit/safetensors/writer.h"

namespace csan::checkpoint {

namespace {

using nlohmann::json;

torch::Tensor bytes_tensor(const std::string& bytes) {
  auto t = torch::empty({static_cast<int64_t>(bytes.size())}, torch::kUInt8);
  if (!bytes.empty()) std::memcpy(t.data_ptr<uint8_t>(), bytes.data(), bytes.size());
  return t;
}

std::string progress_json(const TrainingProgress& p) {
  // A finite double as a JSON number: nlohmann writes the shortest text that reads back
  // to the same double. JSON has no inf or nan: those go as text.
  json best = std::isfinite(p.best_metric) ? json(p.best_metric) : json(std::to_string(p.best_metric));
  return json{{"epoch", p.epoch},
              {"next_batch", p.next_batch},
              {"num_updates", p.num_updates},
              {"best_metric", best},
              {"has_best", p.has_best},
              {"bad_validations", p.bad_validations},
              {"nan_streak", p.nan_streak},
              {"lr_schedule_start", p.lr_schedule_start}}
      .dump();
}

}  // namespace

void CheckpointWriter::set_meta(const CheckpointMeta& meta) {
  for (const auto& [name, bytes] : meta.data)
    if (name.empty() || !utf8::is_valid(name)) throw Error("checkpoint meta: bad data name '" + name + "'");
  meta_ = meta;
}

void CheckpointWriter::set_progress(const TrainingProgress& progress) { progress_ = progress; }

void CheckpointWriter::set_model(const torch::nn::Module& model) {
  model_.clear();
  for (const auto& p : model.named_parameters(/*recurse=*/true)) model_.emplace_back(p.key(), p.value().detach());
  for (const auto& b : model.named_buffers(/*recurse=*/true)) model_.emplace_back(b.key(), b.value().detach());
}

void CheckpointWriter::set_optimizer(const torch::optim::Optimizer& optimizer, const torch::nn::Module& model) {
  SavedOptimizer saved = save_optimizer(optimizer, unique_parameter_names(model));
  optimizer_json_ = std::move(saved.json);
  optimizer_state_ = std::move(saved.state);
}

SectionWriter& CheckpointWriter::section(const std::string& name) { return sections_[name]; }

void CheckpointWriter::set_rng_state(const std::string& generator, const torch::Tensor& state) {
  for (auto& [name, saved] : rng_)
    if (name == generator) {
      saved = state;
      return;
    }
  rng_.emplace_back(generator, state);
}

void CheckpointWriter::capture_rng_state(const torch::Device& device) {
  rng_.clear();
  auto gen = at::detail::getDefaultCPUGenerator();
  {
    std::lock_guard<std::mutex> lock(gen.mutex());
    rng_.emplace_back("cpu", gen.get_state());
  }
  if (device.is_cuda()) {
    auto cuda = at::globalContext().defaultGenerator(device);
    std::lock_guard<std::mutex> lock(cuda.mutex());
    rng_.emplace_back("cuda", cuda.get_state());
  }
}

void CheckpointWriter::write(const std::string& path) const {
  using namespace format3;
  safetensors::Writer out;
  out.set_metadata(kFormat, std::to_string(kFormatVersion));
  out.set_metadata(kTask, meta_.task);
  out.set_metadata(kRecipe, meta_.recipe_yaml);
  if (!meta_.run_info.empty()) out.set_metadata(kRunInfo, meta_.run_info);
  // Kept alive until out.write() has read them.
  std::vector<torch::Tensor> binary;
  for (const auto& [name, bytes] : meta_.data) {
    if (utf8::is_valid(bytes)) {
      out.set_metadata(kDataPrefix + name, bytes);
    } else {  // the SentencePiece model (a protobuf)
      binary.push_back(bytes_tensor(bytes));
      add_tensor(out, kBinaryDataPrefix + name, binary.back());
    }
  }
  out.set_metadata(kProgress, progress_json(progress_));
  for (const auto& [name, tensor] : model_) add_tensor(out, name, tensor);
  if (!optimizer_json_.empty()) {
    out.set_metadata(kOptimizer, optimizer_json_);
    for (const auto& [name, tensor] : optimizer_state_) add_tensor(out, name, tensor);
  }
  json section_names = json::array();
  for (const auto& [section, contents] : sections_) {
    section_names.push_back(section);
    for (const auto& [key, tensor] : contents.tensors()) add_tensor(out, kSectionPrefix + section + "." + key, tensor);
  }
  out.set_metadata(kSections, section_names.dump());
  for (const auto& [generator, state] : rng_) add_tensor(out, kRngPrefix + generator, state);
  out.write(path);
}

CheckpointReader::CheckpointReader(const std::string& path) : path_(path) {
  if (!std::filesystem::exists(path)) throw Error(path + ": no such checkpoint", ErrorKind::missing_file);
  std::string head(2, '\0');
  {
    std::ifstream in(path, std::ios::binary);
    in.read(head.data(), 2);
    head.resize(static_cast<size_t>(in.gcount()));
  }
  // Formats 1 and 2 are zip archives ("PK"); format 3 starts with the header's length.
  OpenedCheckpoint opened = is_legacy_archive(head) ? open_legacy_archive(path) : format3::open(path);
  stored_ = std::move(opened.stored);
  meta_ = std::move(opened.meta);
  progress_ = opened.progress;
  format_version_ = opened.format_version;
}

CheckpointReader::~CheckpointReader() = default;

void CheckpointReader::fail(const std::string& what) const {
  throw Error(path_ + ": " + what, ErrorKind::corrupt_checkpoint);
}

StoredCheckpoint& CheckpointReader::stored() {
  if (!stored_) throw Error("internal: " + path_ + " read after its tensors were released");
  return *stored_;
}

void CheckpointReader::load_model(torch::nn::Module& model, bool adopt) { stored().load_model(model, adopt); }

void CheckpointReader::release_tensors() { stored_.reset(); }

void CheckpointReader::load_optimizer(torch::optim::Optimizer& optimizer, const torch::nn::Module& model) {
  stored().load_optimizer(optimizer, unique_parameter_names(model));
}

bool CheckpointReader::has_optimizer_state() { return stored().has_optimizer(); }

bool CheckpointReader::has_section(const std::string& name) { return stored().section(name).has_value(); }

std::vector<std::string> CheckpointReader::section_names() { return stored().section_names(); }

bool CheckpointReader::rng_state(const std::string& generator, torch::Tensor& state) {
  return stored().rng_state(generator, state);
}

SectionReader CheckpointReader::section(const std::string& name) {
  auto found = stored().section(name);
  if (!found) fail("has no '" + name + "' section");
  return std::move(*found);
}

void CheckpointReader::restore_rng_state(const torch::Device& device) {
  torch::Tensor state;
  if (!stored().rng_state("cpu", state)) fail("has no RNG state");
  auto gen = at::detail::getDefaultCPUGenerator();
  try {
    std::lock_guard<std::mutex> lock(gen.mutex());
    gen.set_state(state);
  } catch (const c10::Error&) {
    fail("its random-number state does not fit this LibTorch");
  }
  torch::Tensor cuda_state;
  if (device.is_cuda() && stored().rng_state("cuda", cuda_state)) {
    auto cuda = at::globalContext().defaultGenerator(device);
    std::lock_guard<std::mutex> lock(cuda.mutex());
    try {
      cuda.set_state(cuda_state);
    } catch (const std::exception&) {
      fail("its GPU random-number state does not fit this LibTorch");
    }
  }
}

}  // namespace csan::checkpoint
