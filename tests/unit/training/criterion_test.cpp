#include <gtest/gtest.h>

#include <cmath>

#include "toolkit/training/criterion.h"
#include "toolkit/training/label_smoothed_cross_entropy.h"

namespace csan::training {
namespace {

constexpr int64_t kCriterionPad = 1;

// fairseq's label_smoothed_nll_loss written out with ordinary autograd ops.
std::pair<torch::Tensor, torch::Tensor> naive(const torch::Tensor& logits, const torch::Tensor& target, double eps) {
  auto lprobs = torch::log_softmax(logits, -1).view({-1, logits.size(-1)});
  auto t = target.reshape({-1, 1});
  auto nll = -lprobs.gather(1, t.clamp_min(0));
  auto smooth = -lprobs.sum(-1, true);
  auto pad = t.eq(kCriterionPad);
  nll = nll.masked_fill(pad, 0.0).sum();
  smooth = smooth.masked_fill(pad, 0.0).sum();
  const double eps_i = eps / static_cast<double>(logits.size(-1) - 1);
  return {(1.0 - eps - eps_i) * nll + eps_i * smooth, nll};
}

struct Example {
  torch::Tensor logits, target;
};

Example example() {
  torch::manual_seed(3);
  Example e;
  e.logits = torch::randn({3, 5, 13}, torch::kDouble) * 3;
  e.target = torch::randint(2, 13, {3, 5}, torch::kLong);
  e.target[0][4] = kCriterionPad;  // right padding, as batches have
  e.target[2][3] = kCriterionPad;
  e.target[2][4] = kCriterionPad;
  return e;
}

TEST(LabelSmoothedCrossEntropy, EqualsFairseqFormulaInValueAndGradient) {
  for (double eps : {0.0, 0.1, 0.3}) {
    auto e = example();
    auto a = e.logits.clone().requires_grad_(true);
    auto b = e.logits.clone().requires_grad_(true);
    auto fused = label_smoothed_cross_entropy(a, e.target, eps, kCriterionPad);
    auto [loss, nll] = naive(b, e.target, eps);
    EXPECT_NEAR(fused.loss.item<double>(), loss.item<double>(), 1e-5) << "eps " << eps;
    EXPECT_NEAR(fused.nll.item<double>(), nll.item<double>(), 1e-5);
    (fused.loss * 0.7).backward();
    (loss * 0.7).backward();
    EXPECT_TRUE(torch::allclose(a.grad(), b.grad(), 1e-5, 1e-6)) << "eps " << eps;
    EXPECT_EQ(a.grad().scalar_type(), torch::kDouble);
  }
}

TEST(LabelSmoothedCrossEntropy, PaddingContributesNothing) {
  auto e = example();
  auto logits = e.logits.clone().requires_grad_(true);
  auto out = label_smoothed_cross_entropy(logits, e.target, 0.1, kCriterionPad);
  out.loss.backward();
  EXPECT_EQ(logits.grad()[0][4].abs().sum().item<double>(), 0.0);
  EXPECT_EQ(logits.grad()[2][3].abs().sum().item<double>(), 0.0);
  // Changing the logits at a padded position leaves the loss unchanged.
  auto changed = e.logits.clone();
  changed[2][4] += 100;
  EXPECT_DOUBLE_EQ(label_smoothed_cross_entropy(changed, e.target, 0.1, kCriterionPad).loss.item<double>(),
                   out.loss.item<double>());
}

TEST(LabelSmoothedCrossEntropy, PlainCrossEntropyIsNllLoss) {
  auto e = example();
  auto out = label_smoothed_cross_entropy(e.logits, e.target, 0.0, kCriterionPad);
  auto expected = torch::nll_loss(torch::log_softmax(e.logits.view({-1, 13}), -1), e.target.view({-1}), {},
                                  at::Reduction::Sum, kCriterionPad);
  EXPECT_NEAR(out.loss.item<double>(), expected.item<double>(), 1e-9);
  EXPECT_DOUBLE_EQ(out.loss.item<double>(), out.nll.item<double>());
}

TEST(Criterion, ReportsInBase2) {
  // 4 tokens with total nll 4 ln 2 nats: 1 bit per token, perplexity 2.
  EXPECT_DOUBLE_EQ(base2(4 * std::log(2.0), 4), 1.0);
  EXPECT_DOUBLE_EQ(std::pow(2.0, base2(4 * std::log(2.0) * 3, 4)), 8.0);
}

}  // namespace
}  // namespace csan::training
