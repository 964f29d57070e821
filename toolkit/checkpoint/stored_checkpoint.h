// What CheckpointReader asks of a format's reader (internal to toolkit/checkpoint): format 3
// (format3_reader.h) and formats 1 and 2 (legacy_archive.h) each implement it.
#pragma once

#include <torch/torch.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "toolkit/checkpoint/checkpoint.h"
#include "toolkit/checkpoint/section.h"

namespace csan::checkpoint {

class StoredCheckpoint {
 public:
  virtual ~StoredCheckpoint() = default;
  // Errors are csan::Error naming the file and the tensor (CheckpointReader::load_model).
  virtual void load_model(torch::nn::Module& model, bool adopt) = 0;
  // `names`: the model's distinct parameter names, the optimizer's parameters by position.
  virtual void load_optimizer(torch::optim::Optimizer& optimizer, const std::vector<std::string>& names) = 0;
  virtual bool has_optimizer() = 0;
  // nullopt when the checkpoint has no such section. The reader stays valid on its own.
  virtual std::optional<SectionReader> section(const std::string& name) = 0;
  virtual std::vector<std::string> section_names() = 0;
  // A generator's state ("cpu", "cuda"); false when not saved.
  virtual bool rng_state(const std::string& generator, torch::Tensor& state) = 0;
};

// What opening a file yields.
struct OpenedCheckpoint {
  std::unique_ptr<StoredCheckpoint> stored;
  CheckpointMeta meta;
  TrainingProgress progress;
  int64_t format_version = 0;
};

}  // namespace csan::checkpoint
