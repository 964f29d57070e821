#include <gtest/gtest.h>

#include <cmath>

#include "toolkit/core/config.h"
#include "toolkit/training/optimizer.h"

namespace csan::training {
namespace {

core::Config optimizer_config(const std::string& name, double weight_decay) {
  core::ConfigSchema schema;
  declare_optimizer_options(schema);
  schema.add_double("optimization.lr", 0.1, "lr");
  core::Config cfg(schema);
  cfg.set("optimizer.name", std::string(name));
  cfg.set("optimizer.adam_betas", std::vector<double>{0.9, 0.98});
  cfg.set("optimizer.weight_decay", weight_decay);
  return cfg;
}

TEST(Optimizer, AdamWFirstStepMatchesTheFormula) {
  auto p = torch::tensor({1.0, -2.0}, torch::kDouble).requires_grad_(true);
  auto opt = build_optimizer({p}, optimizer_config("adamw", 0.01));
  p.mutable_grad() = torch::tensor({0.5, 0.25}, torch::kDouble);
  opt->step();
  // Step 1: bias-corrected moments are g and g^2, so the step is lr * g / (|g| + eps),
  // after decoupled decay p *= 1 - lr * wd.
  const double lr = 0.1, wd = 0.01, eps = 1e-8;
  EXPECT_NEAR(p[0].item<double>(), 1.0 * (1 - lr * wd) - lr * 0.5 / (0.5 + eps), 1e-12);
  EXPECT_NEAR(p[1].item<double>(), -2.0 * (1 - lr * wd) - lr * 0.25 / (0.25 + eps), 1e-12);
}

TEST(Optimizer, LearningRateIsSetPerUpdate) {
  auto p = torch::zeros({1}, torch::kDouble).requires_grad_(true);
  auto opt = build_optimizer({p}, optimizer_config("adam", 0.0));
  set_learning_rate(*opt, 0.5);
  p.mutable_grad() = torch::ones({1}, torch::kDouble);
  opt->step();
  EXPECT_NEAR(p.item<double>(), -0.5, 1e-7);
}

TEST(ClipGradNorm, ReturnsTheNormAndScalesDownOnlyAboveTheLimit) {
  auto a = torch::zeros({1}).requires_grad_(true), b = torch::zeros({1}).requires_grad_(true);
  a.mutable_grad() = torch::tensor({3.0f});
  b.mutable_grad() = torch::tensor({4.0f});
  EXPECT_NEAR(clip_grad_norm({a, b}, 10.0), 5.0, 1e-6);
  EXPECT_FLOAT_EQ(a.grad().item<float>(), 3.0f);
  EXPECT_NEAR(clip_grad_norm({a, b}, 1.0), 5.0, 1e-6);
  EXPECT_NEAR(a.grad().item<float>(), 0.6f, 1e-6);
  EXPECT_NEAR(b.grad().item<float>(), 0.8f, 1e-6);
  multiply_grads({a, b}, 2.0);
  EXPECT_NEAR(b.grad().item<float>(), 1.6f, 1e-6);
}

TEST(UniqueParameters, TiedWeightsCountOnce) {
  struct Tied : torch::nn::Module {
    Tied() {
      auto shared = register_parameter("w", torch::ones({4}));
      child = register_module("child", std::make_shared<torch::nn::Module>());
      child->register_parameter("w_alias", shared);
    }
    std::shared_ptr<torch::nn::Module> child;
  };
  Tied m;
  EXPECT_EQ(m.parameters().size(), 2u);
  EXPECT_EQ(unique_parameters(m).size(), 1u);
}

}  // namespace
}  // namespace csan::training
