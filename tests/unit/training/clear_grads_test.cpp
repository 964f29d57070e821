#include <gtest/gtest.h>
#include <torch/torch.h>

#include "toolkit/training/optimizer.h"

namespace {

using csan::training::clear_grads;

TEST(ClearGrads, DropsGradientsAndTheNextBackwardSetsThemAfresh) {
  auto w = torch::tensor({1.0, -2.0, 3.0}, torch::dtype(torch::kDouble).requires_grad(true));
  torch::optim::SGD sgd({w}, torch::optim::SGDOptions(0.1));
  (w * w).sum().backward();
  ASSERT_TRUE(w.grad().defined());
  clear_grads(sgd);
  EXPECT_FALSE(w.grad().defined());
  // Not added to the previous gradient: exactly d/dw of the second loss.
  (w * 3.0).sum().backward();
  EXPECT_TRUE(torch::equal(w.grad(), torch::full({3}, 3.0, torch::kDouble)));
}

TEST(ClearGrads, AdamSkipsAParameterThatGotNoGradientLikeFairseq) {
  auto used = torch::tensor({1.0, 2.0}, torch::dtype(torch::kDouble).requires_grad(true));
  auto unused = torch::tensor({5.0, 6.0}, torch::dtype(torch::kDouble).requires_grad(true));
  torch::optim::Adam adam({used, unused}, torch::optim::AdamOptions(0.1));
  // Step 1 gives both parameters momentum.
  (used.sum() + unused.sum()).backward();
  adam.step();
  const auto unused_after_first = unused.detach().clone();
  clear_grads(adam);
  // Step 2: `unused` takes no part. zero_grad() would have stepped it with a zero
  // gradient, moving it further along its momentum; with no gradient it stays put.
  used.sum().backward();
  adam.step();
  EXPECT_TRUE(torch::equal(unused.detach(), unused_after_first));
  EXPECT_FALSE(unused.grad().defined());
}

}  // namespace
