// RMSprop as Keras 2.2.4 computes it (the convoluted-attention tagger's optimizer):
//   a_t = rho a_{t-1} + (1 - rho) g_t^2 (a_0 = 0),  p_t = p_{t-1} - lr g_t / (sqrt(a_t) + eps)
// with Keras's defaults rho 0.9, eps 1e-7 (outside the square root), over several steps
// and through a checkpoint-style save and load of its state.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "toolkit/checkpoint/optimizer_state.h"
#include "toolkit/core/config.h"
#include "toolkit/training/optimizer.h"

namespace csan::training {
namespace {

core::Config rmsprop_config() {
  core::ConfigSchema schema;
  declare_optimizer_options(schema);
  schema.add_double("optimization.lr", 1e-3, "lr");
  core::Config cfg(schema);
  cfg.set("optimizer.name", std::string("rmsprop"));
  return cfg;
}

TEST(RmsProp, DefaultsAreKerasAndStepsFollowItsFormula) {
  const auto cfg = rmsprop_config();
  EXPECT_DOUBLE_EQ(cfg.get<double>("optimizer.rmsprop_rho"), 0.9);
  EXPECT_DOUBLE_EQ(cfg.get<double>("optimizer.rmsprop_eps"), 1e-7);
  auto p = torch::tensor({1.0, -2.0, 0.5}, torch::kDouble).requires_grad_(true);
  auto opt = build_optimizer({p}, cfg);
  std::vector<double> expected = {1.0, -2.0, 0.5}, accumulator(3, 0.0);
  // The tiny 1e-6 makes eps's place matter: outside the root the first step of p[2] is
  // 2.4e-3, inside it would be 3.2e-6.
  const std::vector<std::vector<double>> grads = {{0.5, -0.25, 1e-6}, {0.1, 0.3, -2.0}, {-0.7, 0.0, 0.05}};
  const double lr = 1e-3, rho = 0.9, eps = 1e-7;
  for (const auto& g : grads) {
    p.mutable_grad() = torch::tensor(g, torch::kDouble);
    opt->step();
    for (size_t i = 0; i < 3; ++i) {
      accumulator[i] = rho * accumulator[i] + (1 - rho) * g[i] * g[i];
      expected[i] -= lr * g[i] / (std::sqrt(accumulator[i]) + eps);
      EXPECT_NEAR(p[static_cast<int64_t>(i)].item<double>(), expected[i], 1e-12) << i;
    }
  }
}

TEST(RmsProp, StateSurvivesSaveAndLoad) {
  const auto cfg = rmsprop_config();
  auto a = torch::tensor({1.0, 2.0}, torch::kDouble).requires_grad_(true);
  auto b = a.detach().clone().requires_grad_(true);
  auto opt_a = build_optimizer({a}, cfg), opt_b = build_optimizer({b}, cfg);
  a.mutable_grad() = torch::tensor({0.3, -0.1}, torch::kDouble);
  opt_a->step();
  {
    torch::NoGradGuard no_grad;
    b.copy_(a);
  }
  // As a format 3 checkpoint keeps it: by parameter name.
  const checkpoint::SavedOptimizer saved = checkpoint::save_optimizer(*opt_a, {"p"});
  checkpoint::SectionWriter state;
  for (const auto& [key, value] : saved.state) state.write(key, value);
  checkpoint::load_optimizer(*opt_b, {"p"}, saved.json, checkpoint::SectionReader::of(state, "test"), "test");
  for (auto* opt_p : {&a, &b}) opt_p->mutable_grad() = torch::tensor({0.2, 0.4}, torch::kDouble);
  opt_a->step(), opt_b->step();
  EXPECT_TRUE(torch::equal(a, b));
}

}  // namespace
}  // namespace csan::training
