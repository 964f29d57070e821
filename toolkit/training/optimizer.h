// Optimizers by name ("optimizer.name"): adam (L2 penalty added to the gradient, as
// torch.optim.Adam) and adamw (decoupled weight decay, which is what fairseq's "adam"
// does). Their state (moments, step counts) is saved in checkpoints via torch's
// serialization. The learning rate is set before every update from the LR schedule.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include <torch/torch.h>

#include "toolkit/core/config.h"
#include "toolkit/core/registry.h"

namespace csan::training {

using OptimizerFactory =
    std::function<std::unique_ptr<torch::optim::Optimizer>(std::vector<torch::Tensor>, const core::Config&)>;
core::Registry<OptimizerFactory>& optimizer_registry();

void declare_optimizer_options(core::ConfigSchema& schema);
std::unique_ptr<torch::optim::Optimizer> build_optimizer(std::vector<torch::Tensor> params, const core::Config& cfg);

void set_learning_rate(torch::optim::Optimizer& optimizer, double lr);

// Multiplies every gradient by `factor` (normalizing summed losses by the sample size).
void multiply_grads(const std::vector<torch::Tensor>& params, double factor);
// The L2 norm of all gradients together; if max_norm > 0 and the norm exceeds it, the
// gradients are scaled down to max_norm (as torch.nn.utils.clip_grad_norm_). Returns the
// norm before clipping (what fairseq logs as gnorm).
double clip_grad_norm(const std::vector<torch::Tensor>& params, double max_norm);

// Distinct parameters of a module: tied parameters (shared embeddings) appear once, so
// the optimizer updates them once.
std::vector<torch::Tensor> unique_parameters(const torch::nn::Module& module);

}  // namespace csan::training
