#include "toolkit/nn/positional_embedding.h"

#include <gtest/gtest.h>

#include <cmath>

namespace {

using csan::nn::make_positions;
using csan::nn::sinusoidal_table;

TEST(Positions, CountFromPaddingIndexAndSkipPadding) {
  auto tokens = torch::tensor({5, 6, 7, 1, 1, 5, 6, 7, 8, 9}, torch::kLong).view({2, 5});
  auto expected = torch::tensor({2, 3, 4, 1, 1, 2, 3, 4, 5, 6}, torch::kLong).view({2, 5});
  EXPECT_TRUE(torch::equal(make_positions(tokens, 1), expected));
  // Incremental decoding: the 4th token (3 already decoded) gets padding_idx + 4.
  EXPECT_EQ(make_positions(torch::tensor({{9}}, torch::kLong), 1, 3).item<int64_t>(), 5);
}

TEST(Sinusoidal, MatchesFairseqFormula) {
  const int64_t dim = 10, half = 5, pad = 1;
  auto table = sinusoidal_table(20, dim, pad);
  ASSERT_EQ(table.sizes(), (std::vector<int64_t>{20, 10}));
  auto a = table.accessor<float, 2>();
  for (int64_t p : {0, 2, 7, 19}) {
    for (int64_t i = 0; i < half; ++i) {
      double w = std::exp(-static_cast<double>(i) * std::log(10000.0) / (half - 1));
      EXPECT_NEAR(a[p][i], std::sin(p * w), 1e-5) << p << "," << i;
      EXPECT_NEAR(a[p][half + i], std::cos(p * w), 1e-5) << p << "," << i;
    }
  }
  EXPECT_EQ(table[pad].abs().sum().item<float>(), 0.0f);
  // Odd dimension: a zero last column.
  auto odd = sinusoidal_table(6, 7, pad);
  EXPECT_EQ(odd.size(1), 7);
  EXPECT_EQ(odd.select(1, 6).abs().sum().item<float>(), 0.0f);
  EXPECT_NEAR(odd[3][0].item<float>(), std::sin(3.0), 1e-6);
}

TEST(PositionalEmbedding, SinusoidalLooksUpTableAndGrows) {
  csan::nn::PositionalEmbedding pe(csan::nn::PositionalEmbeddingOptions{4, 8, 1, false});
  EXPECT_EQ(pe->parameters().size(), 0u);
  auto tokens = torch::full({1, 10}, 5, torch::kLong);  // longer than max_positions: the table grows
  auto out = pe(tokens);
  auto table = sinusoidal_table(20, 8, 1);
  EXPECT_TRUE(torch::allclose(out[0][9], table[11]));
  EXPECT_TRUE(torch::allclose(out[0][0], table[2]));
}

TEST(PositionalEmbedding, LearnedHasFairseqShapeAndZeroPaddingRow) {
  csan::nn::PositionalEmbedding pe(csan::nn::PositionalEmbeddingOptions{100, 8, 1, true});
  ASSERT_EQ(pe->weight.sizes(), (std::vector<int64_t>{102, 8}));
  auto out = pe(torch::tensor({{4, 4, 1}}, torch::kLong));
  EXPECT_EQ(out[0][2].abs().sum().item<float>(), 0.0f);
  EXPECT_TRUE(torch::equal(out[0][1], pe->weight[3]));
  EXPECT_THROW(pe(torch::full({1, 101}, 4, torch::kLong)), std::exception);
}

}  // namespace
