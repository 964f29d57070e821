// relu_depthwise_conv2d equals relu(torch::conv2d(..., groups = channels)) forward and
// backward, for several filter sizes and non-square planes.
#include "toolkit/nn/depthwise_conv.h"

#include <gtest/gtest.h>

namespace {

TEST(DepthwiseConv, EqualsGroupedConvolutionForwardAndBackward) {
  for (const int64_t k : {1, 3, 5}) {
    for (const auto& shape : std::vector<std::vector<int64_t>>{{2, 3, 7, 7}, {3, 4, 5, 9}, {1, 2, 2, 3}}) {
      torch::manual_seed(k + shape[3]);
      const int64_t channels = shape[1];
      auto x = torch::randn(shape).requires_grad_(true);
      auto w = torch::randn({channels, 1, k, k}).requires_grad_(true);
      auto b = torch::randn({channels}).requires_grad_(true);
      auto probe = torch::randn(shape);
      auto ours = csan::nn::relu_depthwise_conv2d(x, w, b);
      auto theirs = torch::relu(torch::conv2d(x, w, b, 1, k / 2, 1, channels));
      EXPECT_LT((ours - theirs).abs().max().item<double>(), 1e-5) << k;
      auto grads = [&](const torch::Tensor& out) {
        for (auto* t : {&x, &w, &b}) t->mutable_grad() = torch::Tensor();
        (out * probe).sum().backward();
        return std::vector<torch::Tensor>{x.grad().clone(), w.grad().clone(), b.grad().clone()};
      };
      const auto a = grads(csan::nn::relu_depthwise_conv2d(x, w, b));
      const auto e = grads(torch::relu(torch::conv2d(x, w, b, 1, k / 2, 1, channels)));
      for (size_t i = 0; i < 3; ++i) EXPECT_LT((a[i] - e[i]).abs().max().item<double>(), 1e-4) << k << " " << i;
    }
  }
}

TEST(DepthwiseConv, OtherDtypesFallBackToTorch) {
  auto x = torch::randn({1, 2, 4, 4}, torch::kDouble);
  auto w = torch::randn({2, 1, 3, 3}, torch::kDouble), b = torch::randn({2}, torch::kDouble);
  EXPECT_TRUE(torch::allclose(csan::nn::relu_depthwise_conv2d(x, w, b), torch::relu(torch::conv2d(x, w, b, 1, 1, 1, 2))));
}

}  // namespace
