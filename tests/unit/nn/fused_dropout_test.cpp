#include "toolkit/nn/fused_dropout.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <cmath>

#include "toolkit/core/splitmix64.h"

namespace {

using namespace csan::nn;

TEST(FusedDropout, DropsTheRequestedFractionAndScalesTheRest) {
  torch::manual_seed(1);
  const int64_t n = 1 << 20;
  const double p = 0.1;
  auto x = torch::rand({n}) + 0.5;  // no zeros: a zero output means dropped
  auto y = fused_dropout(x, p);
  auto kept = y.ne(0);
  const double kept_fraction = kept.to(torch::kDouble).mean().item<double>();
  // Binomial standard deviation sqrt(p (1-p) / n) = 3e-4; allow 5 of them.
  EXPECT_NEAR(kept_fraction, 1 - p, 5 * std::sqrt(p * (1 - p) / n));
  const double scale = 65536.0 / (65536.0 - std::lround(p * 65536.0));
  EXPECT_TRUE(torch::allclose(y.masked_select(kept), x.masked_select(kept) * scale, 0, 0));
}

TEST(FusedDropout, GradientIsTheMaskTimesTheScale) {
  torch::manual_seed(2);
  auto x = (torch::rand({7, 33, 5}) + 0.5).requires_grad_();
  auto y = fused_dropout(x, 0.3);
  auto g = torch::randn_like(y);
  y.backward(g);
  // y = x * m * s, so dy/dx = m * s = y / x elementwise.
  EXPECT_TRUE(torch::allclose(x.grad(), g * (y / x).detach(), 1e-6, 1e-6));
}

TEST(FusedDropout, AddEqualsResidualPlusDropoutWithTheSameSeed) {
  auto residual = torch::randn({4, 9, 16}).requires_grad_();
  auto x = torch::randn({4, 9, 16}).requires_grad_();
  torch::manual_seed(5);
  auto fused = fused_dropout_add(residual, x, 0.2);
  torch::manual_seed(5);
  auto separate = residual + fused_dropout(x, 0.2);
  EXPECT_TRUE(torch::allclose(fused, separate, 1e-6, 1e-6));
  auto g = torch::randn_like(fused);
  fused.backward(g);
  EXPECT_TRUE(torch::equal(residual.grad(), g));
  torch::manual_seed(5);
  auto expected_grad = torch::autograd::grad({fused_dropout(x, 0.2)}, {x}, {g})[0];
  EXPECT_TRUE(torch::allclose(x.grad(), expected_grad, 0, 0));
}

TEST(FusedDropout, SeededByTorchAndIndependentOfThreadCount) {
  auto x = torch::randn({1000, 257});
  const int threads = at::get_num_threads();
  at::set_num_threads(1);
  torch::manual_seed(9);
  auto one = fused_dropout(x, 0.1);
  auto next = fused_dropout(x, 0.1);
  at::set_num_threads(2);
  torch::manual_seed(9);
  auto two = fused_dropout(x, 0.1);
  at::set_num_threads(threads);
  EXPECT_TRUE(torch::equal(one, two));
  EXPECT_FALSE(torch::equal(one, next));  // each call draws a fresh seed
}

TEST(FusedDropout, OtherDtypesUseTheSameMask) {
  auto x = torch::randn({64, 31}, torch::kDouble);
  torch::manual_seed(4);
  auto as_double = fused_dropout(x, 0.25);
  torch::manual_seed(4);
  auto as_float = fused_dropout(x.to(torch::kFloat), 0.25);
  EXPECT_EQ(as_double.scalar_type(), torch::kDouble);
  EXPECT_TRUE(torch::allclose(as_double.to(torch::kFloat), as_float, 1e-6, 1e-6));
}

TEST(FusedDropout, NonContiguousInputAndBadProbability) {
  torch::manual_seed(6);
  auto x = torch::randn({16, 8}).t();
  auto y = fused_dropout(x, 0.5);
  EXPECT_EQ(y.sizes(), x.sizes());
  auto kept = y.ne(0);
  EXPECT_TRUE(torch::allclose(y.masked_select(kept), x.masked_select(kept) * 2.0, 1e-6, 1e-6));
  EXPECT_THROW(fused_dropout(x, 1.0), std::exception);
  EXPECT_THROW(fused_dropout(x, -0.1), std::exception);
}

// The mask is core::SplitMix64's stream seeded by one draw of torch's generator: each
// number gives four 16-bit draws, and an element is kept when its draw reaches p * 2^16.
// Pins every mask (and so every trained model) to the shared generator.
TEST(FusedDropout, MaskIsTheSplitMix64StreamOfTorchsSeed) {
  const int64_t n = 1001;
  const double p = 0.3;
  auto x = torch::rand({n}) + 0.5;
  torch::manual_seed(12);
  const uint64_t seed = at::detail::getDefaultCPUGenerator().get<at::CPUGeneratorImpl>()->random64();
  torch::manual_seed(12);
  const auto kept = fused_dropout(x, p).ne(0);
  const auto threshold = static_cast<uint64_t>(std::lround(p * 65536.0));
  csan::core::SplitMix64 stream(seed - csan::core::kSplitMix64Increment);
  uint64_t bits = 0;
  for (int64_t i = 0; i < n; ++i, bits >>= 16) {
    if (i % 4 == 0) bits = stream.next();
    ASSERT_EQ(kept[i].item<bool>(), (bits & 0xffff) >= threshold) << "element " << i;
  }
}

}  // namespace
