// Self-contained checkpoints: model weights plus everything needed to resume training
// exactly (optimizer, schedule position, precision state, RNG states, position in the
// epoch) or to use the model without the data directory (the task, the resolved recipe
// and the task's data: dictionaries, the SentencePiece model). Training writes them and
// csan-generate, checkpoint averaging and the tests read them, so they live below both
// (toolkit/checkpoint/).
// Format 3 (what CheckpointWriter writes) is a safetensors file (toolkit/safetensors/,
// its format.h says how each part maps), written atomically with a checksum and read in
// place from a memory map. Formats 1 and 2 (a LibTorch pickle archive with a checksum
// trailer; 1 was translation's fixed fields) are still read (legacy_archive.h) for
// generation, resuming, averaging and tools/convert-checkpoint.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "toolkit/checkpoint/section.h"

namespace csan::checkpoint {

// What CheckpointWriter writes.
constexpr int64_t kFormatVersion = 3;

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
  // The update count at which the learning-rate schedule (re)started: the rate of update
  // n is the schedule's at n - lr_schedule_start (--reset-lr-scheduler sets it).
  int64_t lr_schedule_start = 0;
};

class CheckpointWriter {
 public:
  void set_meta(const CheckpointMeta& meta);
  void set_progress(const TrainingProgress& progress);
  // The model's parameters and buffers under their names (held, not copied, until write()).
  void set_model(const torch::nn::Module& model);
  // The optimizer's state by the names of `model`'s parameters (optimizer_state.h).
  void set_optimizer(const torch::optim::Optimizer& optimizer, const torch::nn::Module& model);
  // A named part for other components (precision: loss scaler state, master weights).
  SectionWriter& section(const std::string& name);
  // A generator's state as CheckpointReader::rng_state gives it (a conversion's copy).
  void set_rng_state(const std::string& generator, const torch::Tensor& state);
  // Captures torch's default CPU generator now, and the GPU's when `device` is one (dropout
  // on a GPU draws from it), so a resumed run continues the same random stream.
  void capture_rng_state(const torch::Device& device = torch::kCPU);
  // Atomically writes the checkpoint to `path`: on a failure (csan::Error naming the file)
  // the previous file at `path` stays as it was.
  void write(const std::string& path) const;

 private:
  CheckpointMeta meta_;
  TrainingProgress progress_;
  std::vector<std::pair<std::string, torch::Tensor>> model_;
  std::string optimizer_json_;
  std::vector<std::pair<std::string, torch::Tensor>> optimizer_state_;
  std::map<std::string, SectionWriter> sections_;
  std::vector<std::pair<std::string, torch::Tensor>> rng_;
};

// One format's reading (a format 3 file, or a format 1/2 archive); CheckpointReader's.
class StoredCheckpoint;

class CheckpointReader {
 public:
  // Throws csan::Error naming the file if it is missing, truncated, corrupt or not a
  // csan checkpoint.
  explicit CheckpointReader(const std::string& path);
  ~CheckpointReader();
  const std::string& path() const { return path_; }
  const CheckpointMeta& meta() const { return meta_; }
  const TrainingProgress& progress() const { return progress_; }
  int64_t format_version() const { return format_version_; }
  // Copies the saved weights into `model` (names and shapes must match; floating-point
  // types convert, others must agree). With `adopt` (a model for inference that is never
  // written), stored fp32, bf16 and int8 tensors of the model's type are used where they
  // are instead: in a format 3 file the tensor is a view of the file's mapping (one
  // resident copy, paged in from the page cache), in a format 1/2 archive LibTorch's copy.
  void load_model(torch::nn::Module& model, bool adopt = false);
  // Frees what the reader holds (the weights a model did not adopt, the optimizer
  // state); meta() and progress() stay. Any later read of a section is an error.
  void release_tensors();
  // `model` names the optimizer's parameters (by position, as for set_optimizer).
  void load_optimizer(torch::optim::Optimizer& optimizer, const torch::nn::Module& model);
  bool has_optimizer_state();
  bool has_section(const std::string& name);
  std::vector<std::string> section_names();
  // Throws csan::Error naming the file when there is no such section.
  SectionReader section(const std::string& name);
  // Restores torch's default CPU generator, and `device`'s when it is a GPU and the
  // checkpoint holds its state (one written on the CPU does not: the GPU's stays seeded).
  void restore_rng_state(const torch::Device& device = torch::kCPU);
  // A saved generator state ("cpu", "cuda"); false when there is none.
  bool rng_state(const std::string& generator, torch::Tensor& state);

 private:
  [[noreturn]] void fail(const std::string& what) const;
  StoredCheckpoint& stored();
  std::string path_;
  std::unique_ptr<StoredCheckpoint> stored_;
  CheckpointMeta meta_;
  TrainingProgress progress_;
  int64_t format_version_ = 0;
};

}  // namespace csan::checkpoint
