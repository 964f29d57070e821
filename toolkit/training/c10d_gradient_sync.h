// GradientSync over c10d: rendezvous through a TCPStore hosted by rank 0, collectives
// with ProcessGroupGloo (CPU) or ProcessGroupNCCL (CUDA builds of LibTorch only).
// Gradients travel in buckets (distributed_buckets.h), the update's statistics in one
// small all-reduce. Every collective has the configured timeout; a failure becomes one
// csan::Error naming this rank and the peers that stopped answering (dead or hung),
// found by asking the survivors to check in at the store.
#pragma once

#include <memory>

#include <torch/torch.h>

#include "toolkit/training/distributed_setup.h"
#include "toolkit/training/gradient_sync.h"

namespace csan::training {

class C10dGradientSync : public GradientSync {
 public:
  // Blocks until all setup.world_size workers have joined (or the timeout passes).
  // `device` is where the model's parameters live: CUDA selects NCCL for backend "auto".
  C10dGradientSync(const DistributedSetup& setup, torch::Device device);
  ~C10dGradientSync() override;

  int rank() const override;
  int world_size() const override;
  void all_reduce_grads(const std::vector<torch::Tensor>& params) override;
  void all_reduce_sums(std::vector<double>& values) override;

  const std::string& backend_name() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace csan::training
