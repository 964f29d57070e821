// An optimizer's state by parameter name (checkpoint format 3). LibTorch's own
// serialization keys each parameter's state by its TensorImpl address and relies on the
// pickle archive; here each field is a tensor "optimizer.NAME.FIELD" (the step counter a
// 0-dim I64) and the param groups' options with their parameters' names are JSON
// (csan.optimizer), so that restoring is exact and a reader sees whose state is whose.
// Adam, AdamW and RMSprop: what toolkit/training's optimizer factory builds.
#pragma once

#include <torch/torch.h>

#include <string>
#include <utility>
#include <vector>

#include "toolkit/checkpoint/section.h"

namespace csan::checkpoint {

// The names of `model`'s distinct parameters in the order of parameters(recurse): a tied
// parameter under its first name. The optimizer's parameters correspond by position (its
// own tensors may be fp32 masters of the model's).
std::vector<std::string> unique_parameter_names(const torch::nn::Module& model);

struct SavedOptimizer {
  std::string json;                                          // csan.optimizer
  std::vector<std::pair<std::string, torch::Tensor>> state;  // "optimizer.NAME.FIELD"
};
// Throws csan::Error for an optimizer of another kind or a parameter count that differs
// from `names`.
SavedOptimizer save_optimizer(const torch::optim::Optimizer& optimizer, const std::vector<std::string>& names);

// Restores options and state; `state` finds "optimizer.NAME.FIELD". Throws csan::Error
// naming `where` when the saved state does not fit (another optimizer, other parameters).
void load_optimizer(torch::optim::Optimizer& optimizer, const std::vector<std::string>& names, const std::string& json,
                    const SectionReader& state, const std::string& where);

}  // namespace csan::checkpoint
