// Self-contained checkpoints: model weights plus everything needed to resume training
// exactly (optimizer, schedule position, precision state, RNG states, position in the
// epoch) or to use the model without the data directory (the task, the resolved recipe
// and the task's data: dictionaries, the SentencePiece model). The file is a torch
// serialization archive (a zip) followed by a checksum trailer, written atomically
// (temporary file + rename). Training writes it and csan-generate, checkpoint averaging
// and the tests read it, so it lives below both (toolkit/checkpoint/).
// Format 2 (this one) stores the task and its data under names; format 1 (before tasks)
// was translation's fixed fields and still loads, as the translation task's data.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>

namespace csan::checkpoint {

// What using the model needs besides the weights, and what identifies the run.
struct CheckpointMeta {
  std::string task = "translation";  // the task that trained it (task.name)
  std::string recipe_yaml;           // Config::to_yaml() of the run
  // The task's data by name, e.g. translation's "src_lang", "tgt_lang", "src_dict",
  // "tgt_dict" (dict.txt contents) and "spm_model" (model bytes, "" if none).
  std::map<std::string, std::string> data;
  // What produced the run (toolkit version, LibTorch, BLAS, CPU, precision, threads; JSON),
  // for a person reading the checkpoint later; "" when unknown. Not compared anywhere.
  std::string run_info;

  // data[name], or "" when absent.
  std::string get(const std::string& name) const {
    auto it = data.find(name);
    return it == data.end() ? std::string() : it->second;
  }
};

// Where training stands; enough to continue bit-identically.
struct TrainingProgress {
  int64_t epoch = 1;
  int64_t next_batch = 0;  // next batch of `epoch` to train on
  int64_t num_updates = 0;
  double best_metric = 0;  // best validation metric so far (valid iff has_best)
  bool has_best = false;
  int64_t bad_validations = 0;  // validations without improvement (patience)
  int64_t nan_streak = 0;
};

class CheckpointWriter {
 public:
  CheckpointWriter();
  void set_meta(const CheckpointMeta& meta);
  void set_progress(const TrainingProgress& progress);
  void set_model(const torch::nn::Module& model);
  void set_optimizer(const torch::optim::Optimizer& optimizer);
  // A named sub-archive for other components (precision: loss scaler state).
  torch::serialize::OutputArchive& section(const std::string& name);
  // Captures torch's default CPU generator now, and the GPU's when `device` is one (dropout
  // on a GPU draws from it), so a resumed run continues the same random stream.
  void capture_rng_state(const torch::Device& device = torch::kCPU);
  // Atomically writes the archive to `path`.
  void write(const std::string& path);

 private:
  torch::serialize::OutputArchive archive_;
  // Held by pointer: OutputArchive's copy constructor takes a non-const reference, which
  // clang's std::pair (the fuzz build) refuses as a map value.
  std::map<std::string, std::unique_ptr<torch::serialize::OutputArchive>> sections_;
};

// Appends the checksum trailer that CheckpointReader requires to serialized archive bytes
// (the writer's last step; the checkpoint fuzz target seals crafted archives with it).
void append_trailer(std::string& archive_bytes);

class CheckpointReader {
 public:
  // Throws csan::Error naming the file if it is missing, truncated, corrupt or not a
  // csan checkpoint.
  explicit CheckpointReader(const std::string& path);
  const std::string& path() const { return path_; }
  const CheckpointMeta& meta() const { return meta_; }
  const TrainingProgress& progress() const { return progress_; }
  int64_t format_version() const { return format_version_; }
  // Copies the saved weights into `model` (names and shapes must match; a submodule
  // without parameters or buffers may be missing from the file). With `adopt` (a model
  // for inference), fp32 weights are taken over from the archive rather than copied.
  void load_model(torch::nn::Module& model, bool adopt = false);
  // Frees the loaded archive (the weights a model did not adopt, the optimizer state);
  // meta() and progress() stay. Any later read of a section is an error.
  void release_tensors();
  void load_optimizer(torch::optim::Optimizer& optimizer);
  bool has_section(const std::string& name);
  torch::serialize::InputArchive section(const std::string& name);
  // Restores torch's default CPU generator, and `device`'s when it is a GPU and the
  // checkpoint holds its state (one written on the CPU does not: the GPU's stays seeded).
  void restore_rng_state(const torch::Device& device = torch::kCPU);

 private:
  [[noreturn]] void fail(const std::string& what) const;
  void check_not_released() const;
  std::string path_;
  torch::serialize::InputArchive archive_;
  CheckpointMeta meta_;
  TrainingProgress progress_;
  int64_t format_version_ = 0;
  bool released_ = false;
};

}  // namespace csan::checkpoint
