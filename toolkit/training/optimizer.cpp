#include "toolkit/training/optimizer.h"

#include <cmath>
#include <unordered_set>

#include "toolkit/core/error.h"
#include "toolkit/training/training_options.h"

namespace csan::training {

namespace {

std::tuple<double, double> betas(const core::Config& cfg) {
  auto b = cfg.get<std::vector<double>>("optimizer.adam_betas");
  if (b.size() != 2) throw Error::for_key("optimizer.adam_betas", "needs two values, e.g. [0.9, 0.98]");
  return {b[0], b[1]};
}

core::Registrar<OptimizerFactory> adam(optimizer_registry(), "adam",
                                       [](std::vector<torch::Tensor> params, const core::Config& cfg) {
                                         torch::optim::AdamOptions o(cfg.get<double>("optimization.lr"));
                                         o.betas(betas(cfg)).eps(cfg.get<double>("optimizer.adam_eps"));
                                         o.weight_decay(cfg.get<double>("optimizer.weight_decay"));
                                         return std::make_unique<torch::optim::Adam>(std::move(params), o);
                                       });
core::Registrar<OptimizerFactory> adamw(optimizer_registry(), "adamw",
                                        [](std::vector<torch::Tensor> params, const core::Config& cfg) {
                                          torch::optim::AdamWOptions o(cfg.get<double>("optimization.lr"));
                                          o.betas(betas(cfg)).eps(cfg.get<double>("optimizer.adam_eps"));
                                          o.weight_decay(cfg.get<double>("optimizer.weight_decay"));
                                          return std::make_unique<torch::optim::AdamW>(std::move(params), o);
                                        });
// Keras's RMSprop (the convoluted-attention tagger's optimizer): a = rho a + (1 - rho) g^2,
// p -= lr g / (sqrt(a) + eps), the accumulator starting at zero. torch.optim.RMSprop
// without momentum or centering computes exactly this (alpha = rho, eps outside the sqrt).
core::Registrar<OptimizerFactory> rmsprop(optimizer_registry(), "rmsprop",
                                          [](std::vector<torch::Tensor> params, const core::Config& cfg) {
                                            torch::optim::RMSpropOptions o(cfg.get<double>("optimization.lr"));
                                            o.alpha(cfg.get<double>("optimizer.rmsprop_rho"));
                                            o.eps(cfg.get<double>("optimizer.rmsprop_eps"));
                                            o.weight_decay(cfg.get<double>("optimizer.weight_decay"));
                                            return std::make_unique<torch::optim::RMSprop>(std::move(params), o);
                                          });

}  // namespace

core::Registry<OptimizerFactory>& optimizer_registry() {
  static core::Registry<OptimizerFactory> registry("optimizer");
  return registry;
}

void declare_optimizer_options(core::ConfigSchema& schema) {
  schema.add_string("optimizer.name", "adam", "optimizer", optimizer_registry().names());
  schema.add_double_list("optimizer.adam_betas", std::vector<double>{0.9, 0.999}, "Adam betas", 0.0, 1.0);
  schema.add_double("optimizer.adam_eps", 1e-8, "Adam epsilon", 0.0, kMaxFloatOption);
  schema.add_double("optimizer.weight_decay", 0.0, "weight decay (L2 for adam and rmsprop, decoupled for adamw)", 0.0,
                    kMaxFloatOption);
  schema.add_double("optimizer.rmsprop_rho", 0.9, "RMSprop decay of the squared-gradient average (Keras's rho)", 0.0,
                    1.0);
  schema.add_double("optimizer.rmsprop_eps", 1e-7, "RMSprop epsilon, added outside the square root (Keras's)", 0.0,
                    kMaxFloatOption);
}

std::unique_ptr<torch::optim::Optimizer> build_optimizer(std::vector<torch::Tensor> params, const core::Config& cfg) {
  return optimizer_registry().get(cfg.get<std::string>("optimizer.name"))(std::move(params), cfg);
}

void set_learning_rate(torch::optim::Optimizer& optimizer, double lr) {
  for (auto& group : optimizer.param_groups()) group.options().set_lr(lr);
}

namespace {
void move(torch::Tensor t, const torch::Device& device, const std::function<void(torch::Tensor)>& set) {
  if (t.defined() && t.device() != device) set(t.to(device));
}
}  // namespace

void move_optimizer_state(torch::optim::Optimizer& optimizer, const torch::Device& device) {
  using namespace torch::optim;
  for (auto& entry : optimizer.state()) {
    OptimizerParamState* state = entry.second.get();
    if (auto* adam = dynamic_cast<AdamParamState*>(state)) {
      move(adam->exp_avg(), device, [&](torch::Tensor t) { adam->exp_avg(t); });
      move(adam->exp_avg_sq(), device, [&](torch::Tensor t) { adam->exp_avg_sq(t); });
      move(adam->max_exp_avg_sq(), device, [&](torch::Tensor t) { adam->max_exp_avg_sq(t); });
    } else if (auto* adamw = dynamic_cast<AdamWParamState*>(state)) {
      move(adamw->exp_avg(), device, [&](torch::Tensor t) { adamw->exp_avg(t); });
      move(adamw->exp_avg_sq(), device, [&](torch::Tensor t) { adamw->exp_avg_sq(t); });
      move(adamw->max_exp_avg_sq(), device, [&](torch::Tensor t) { adamw->max_exp_avg_sq(t); });
    } else if (auto* rmsprop = dynamic_cast<RMSpropParamState*>(state)) {
      move(rmsprop->square_avg(), device, [&](torch::Tensor t) { rmsprop->square_avg(t); });
      move(rmsprop->momentum_buffer(), device, [&](torch::Tensor t) { rmsprop->momentum_buffer(t); });
      move(rmsprop->grad_avg(), device, [&](torch::Tensor t) { rmsprop->grad_avg(t); });
    }
  }
}

void clear_grads(torch::optim::Optimizer& optimizer) {
  for (auto& group : optimizer.param_groups())
    for (auto& p : group.params()) p.mutable_grad() = torch::Tensor();
}

void multiply_grads(const std::vector<torch::Tensor>& params, double factor) {
  torch::NoGradGuard no_grad;
  for (const auto& p : params)
    if (p.grad().defined()) p.mutable_grad().mul_(factor);
}

double clip_grad_norm(const std::vector<torch::Tensor>& params, double max_norm) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> norms;
  for (const auto& p : params)
    if (p.grad().defined()) norms.push_back(p.grad().to(torch::kFloat).norm().unsqueeze(0));
  if (norms.empty()) return 0.0;
  const double total = torch::cat(norms).norm().item<double>();
  if (max_norm > 0 && total > max_norm) {
    const double coef = max_norm / (total + 1e-6);
    for (const auto& p : params)
      if (p.grad().defined()) p.mutable_grad().mul_(coef);
  }
  return total;
}

std::vector<torch::Tensor> unique_parameters(const torch::nn::Module& module) {
  std::vector<torch::Tensor> out;
  std::unordered_set<const void*> seen;
  for (const auto& p : module.parameters(/*recurse=*/true))
    if (seen.insert(p.unsafeGetTensorImpl()).second) out.push_back(p);
  return out;
}

}  // namespace csan::training
