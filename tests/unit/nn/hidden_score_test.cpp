// The score that hides a key, in each type scores take. On a GPU with --precision fp16
// the attention scores are fp16, where -1e9 does not exist: BLOCK's masked_fill threw
// ("cannot be converted to type c10::Half without overflow") and BI_DIRECT's bias became
// -inf, so a padding query of a backward head (every key hidden) turned NaN and
// training stopped at the minimum loss scale. These are those two cases on the CPU.
#include "toolkit/nn/hidden_score.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

namespace {

using csan::nn::bias_as;
using csan::nn::hidden_score;
using csan::nn::kHiddenScore;

TEST(HiddenScore, IsTheFirstAuthorsValueWhereTheTypeHoldsIt) {
  for (auto dtype : {torch::kFloat, torch::kDouble, torch::kBFloat16}) EXPECT_EQ(hidden_score(dtype), kHiddenScore);
  const double half = hidden_score(torch::kHalf);
  EXPECT_LT(half, -30000.0);
  // A score added to it stays finite in fp16, and it still hides the key in the float softmax.
  const auto sum = torch::full({1}, half, torch::kHalf) + torch::full({1}, -2000.0, torch::kHalf);
  EXPECT_TRUE(torch::isfinite(sum).all().item<bool>());
  const auto probs = torch::softmax(torch::tensor({0.0, half}).to(torch::kHalf), -1, torch::kFloat);
  EXPECT_EQ(probs[0].item<float>(), 1.0f);
  EXPECT_EQ(probs[1].item<float>(), 0.0f);
}

TEST(HiddenScore, MasksOfHalfScoresFillWithoutOverflow) {
  const auto mask = torch::tensor({true, false});
  EXPECT_THROW(torch::zeros({2}, torch::kHalf).masked_fill(mask, kHiddenScore), std::exception);  // what BLOCK did
  const auto filled = torch::zeros({2}, torch::kHalf).masked_fill(mask, hidden_score(torch::kHalf));
  EXPECT_TRUE(torch::isfinite(filled).all().item<bool>());
}

// A padding query of a backward head: its later keys are padding (-inf), its earlier
// ones hidden by the direction's bias (float, summed over two entries here).
TEST(HiddenScore, AHalfRowWhoseEveryKeyIsHiddenAveragesInsteadOfNaN) {
  const double inf = std::numeric_limits<double>::infinity();
  const auto scores = torch::tensor({{0.5, -1.5, -inf, -inf}}).to(torch::kHalf);
  const auto bias = torch::tensor({{kHiddenScore, 2 * kHiddenScore, 0.0, 0.0}});
  EXPECT_TRUE(torch::isnan(torch::softmax(scores + bias.to(torch::kHalf), -1, torch::kFloat)).any().item<bool>());

  const auto half_bias = bias_as(bias, torch::kHalf);
  EXPECT_EQ(half_bias.scalar_type(), torch::kHalf);
  EXPECT_TRUE(torch::isfinite(half_bias).all().item<bool>());
  const auto probs = torch::softmax(scores + half_bias, -1, torch::kFloat);
  EXPECT_TRUE(torch::isfinite(probs).all().item<bool>());
  EXPECT_NEAR(probs.sum().item<float>(), 1.0f, 1e-6);
  EXPECT_EQ(probs[0][2].item<float>(), 0.0f);  // padding stays out

  // A visible key still takes all of the probability.
  const auto visible = torch::tensor({{0.5, -1.5, 3.0, -inf}}).to(torch::kHalf);
  EXPECT_EQ(torch::softmax(visible + half_bias, -1, torch::kFloat)[0][2].item<float>(), 1.0f);
  // Other types keep the float bias's values.
  EXPECT_TRUE(torch::equal(bias_as(bias, torch::kFloat), bias));
  EXPECT_EQ(bias_as(bias, torch::kBFloat16)[0][0].item<float>(),
            torch::tensor(kHiddenScore).to(torch::kBFloat16).item<float>());
}

}  // namespace
