// Optimizers by name ("optimizer.name"): adam (L2 penalty added to the gradient, as
// torch.optim.Adam), adamw (decoupled weight decay, which is what fairseq's "adam"
// does) and rmsprop (Keras's: eps outside the square root; the tagger's). Their state (moments, step counts) is saved
// in checkpoints via torch's serialization. The learning rate is set before every update from the LR schedule.
#pragma once

#include <torch/torch.h>

#include <functional>
#include <memory>
#include <vector>

#include "toolkit/core/config.h"
#include "toolkit/core/registry.h"

namespace csan::training {

using OptimizerFactory =
    std::function<std::unique_ptr<torch::optim::Optimizer>(std::vector<torch::Tensor>, const core::Config&)>;
core::Registry<OptimizerFactory>& optimizer_registry();

void declare_optimizer_options(core::ConfigSchema& schema);
std::unique_ptr<torch::optim::Optimizer> build_optimizer(std::vector<torch::Tensor> params, const core::Config& cfg);

void set_learning_rate(torch::optim::Optimizer& optimizer, double lr);

// Drops the gradients of the optimizer's parameters (fairseq's zero_grad: p.grad = None;
// LibTorch 1.13's zero_grad() zero-fills them instead). The next backward pass then hands
// its gradient buffers over rather than adding them into zeroed ones, which saves a fill
// and an add over every gradient. A parameter that gets no gradient is skipped by the
// optimizer, as in fairseq, instead of being stepped with a zero gradient.
void clear_grads(torch::optim::Optimizer& optimizer);

// Moves the optimizer's state (moments, running averages) to `device`, where its
// parameters live: state loaded from a checkpoint arrives on the CPU.
void move_optimizer_state(torch::optim::Optimizer& optimizer, const torch::Device& device);

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
