// Data-parallel communication, called by the trainer once per update (never per
// micro-batch): sums gradients and the update's statistics over ranks. This file holds
// the interface and the single-process version; the distributed issue adds c10d
// (Gloo/NCCL) implementations with bucketed all-reduce.
#pragma once

#include <vector>

#include <torch/torch.h>

namespace csan::training {

class GradientSync {
 public:
  virtual ~GradientSync() = default;
  virtual int rank() const = 0;
  virtual int world_size() const = 0;
  // Sums every parameter's gradient over ranks, in place.
  virtual void all_reduce_grads(const std::vector<torch::Tensor>& params) = 0;
  // Sums statistics (sample size, loss sums, counts) over ranks, in place.
  virtual void all_reduce_sums(std::vector<double>& values) = 0;
  bool is_master() const { return rank() == 0; }
};

class LocalGradientSync : public GradientSync {
 public:
  int rank() const override { return 0; }
  int world_size() const override { return 1; }
  void all_reduce_grads(const std::vector<torch::Tensor>&) override {}
  void all_reduce_sums(std::vector<double>&) override {}
};

}  // namespace csan::training
