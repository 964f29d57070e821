// RAII forward-precision scope: while alive, eligible ops (matrix products, linear
// layers) on `device` run in `dtype` (torch autocast); on exit the previous state is
// restored and, when leaving the outermost scope, the cache of low-precision weight
// copies is cleared (the weights change after every optimizer step). Used around the
// forward pass and loss by the trainer (train and valid steps) and by generation.
#pragma once

#include <torch/torch.h>

#include <string>

namespace csan::training {

struct AutocastSpec {
  bool enabled = false;
  torch::DeviceType device = torch::kCPU;
  torch::ScalarType dtype = torch::kBFloat16;
};

class AutocastGuard {
 public:
  explicit AutocastGuard(const AutocastSpec& spec);
  ~AutocastGuard();
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  AutocastSpec spec_;
  bool previous_enabled_ = false;
  torch::ScalarType previous_dtype_ = torch::kBFloat16;
};

}  // namespace csan::training
