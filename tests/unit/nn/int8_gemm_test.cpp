// csan's int8 product (nn/int8_gemm.h): the plain C++ reference against the float product
// of the dequantized operands (the error its 8-bit activations allow, no more), and the
// AVX512-VNNI kernel against the reference to the last bit, over shapes that exercise
// every tail (rows not a multiple of the 6-row tile or the 96-row chunk, outputs not a
// multiple of the 64-row panel or a 16-lane vector, inputs not a multiple of 4).
#include "toolkit/nn/int8_gemm.h"

#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <tuple>

namespace {

using namespace csan;

struct Int8Weight {
  torch::Tensor values, scales;
};

Int8Weight random_weight(int64_t n, int64_t k) {
  const auto w = torch::randn({n, k});
  const auto scales = (w.abs().amax(1) / 127.0).clamp_min(1e-12);
  return {torch::round(w / scales.unsqueeze(1)).clamp(-127, 127).to(torch::kChar), scales};
}

torch::Tensor dequantized(const Int8Weight& w) { return w.values.to(torch::kFloat) * w.scales.unsqueeze(1); }

// Each activation is rounded to a multiple of its row's step (hi - lo) / 255, so output n
// of row m is off by at most half a step times sum_k |W[n,k]|, plus float noise.
torch::Tensor quantization_bound(const torch::Tensor& x, const Int8Weight& w) {
  const auto lo = x.amin(1).clamp_max(0), hi = x.amax(1).clamp_min(0);
  const auto half_step = (hi - lo) / 255.0 / 2;
  return half_step.unsqueeze(1) * dequantized(w).abs().sum(1).unsqueeze(0) * 1.001 + 1e-4;
}

TEST(Int8Gemm, TheReferenceIsTheDequantizedProductUpToEightBitActivationsPerRow) {
  torch::manual_seed(1);
  const auto w = random_weight(24, 40);
  const auto bias = torch::randn({24});
  // Row 0 is a ReLU's output (non-negative): its 8 bits span [0, max] alone, a step half
  // that of a symmetric scale. Row 1 is 100x the others: per-row scales keep the rest precise.
  auto x = torch::randn({6, 40});
  x[0] = x[0].relu();
  x[1].mul_(100);
  const auto y = nn::int8_gemm_reference(x, w.values, w.scales, bias);
  const auto exact = torch::matmul(x, dequantized(w).t()) + bias;
  EXPECT_TRUE(((y - exact).abs() <= quantization_bound(x, w)).all().item<bool>())
      << ((y - exact).abs() - quantization_bound(x, w)).max().item<double>();
  // And it is a real rounding, not exact: the bound is not vacuous.
  EXPECT_GT((y - exact).abs().max().item<double>(), 1e-5);
}

TEST(Int8Gemm, ZeroRowsGiveTheBiasAndValuesOnTheGridAreExact) {
  const auto w = random_weight(5, 8);
  const auto bias = torch::randn({5});
  auto x = torch::zeros({2, 8});
  // Row 1: multiples of 1/255 spanning [0, 1] are on the grid (scale 1/255, zero point 0).
  x[1] = torch::tensor({0.0, 1.0, 2.0, 17.0, 100.0, 254.0, 255.0, 3.0}) / 255.0;
  const auto y = nn::int8_gemm_reference(x, w.values, w.scales, bias);
  EXPECT_TRUE(torch::equal(y[0], bias));
  EXPECT_TRUE(torch::allclose(y[1], torch::matmul(x[1], dequantized(w).t()) + bias, 1e-5, 1e-5));
}

class Int8GemmKernel : public ::testing::TestWithParam<std::tuple<int64_t, int64_t, int64_t>> {};

TEST_P(Int8GemmKernel, EqualsTheReferenceToTheLastBit) {
  if (!nn::int8_gemm_available()) GTEST_SKIP() << "this CPU has no AVX512-VNNI";
  const auto [m, n, k] = GetParam();
  torch::manual_seed(m * 1000003 + n * 1009 + k);
  const auto w = random_weight(n, k);
  const nn::PackedInt8Weight packed(w.values, w.scales);
  EXPECT_EQ(packed.rows(), n);
  EXPECT_EQ(packed.depth(), k);
  auto x = torch::randn({m, k}) * 3;
  if (m > 2) {
    x[0].zero_();
    x[1] = x[1].relu();
  }
  const auto bias = torch::randn({n});
  for (const auto& b : {bias, torch::Tensor()}) {
    const auto expected = nn::int8_gemm_reference(x, w.values, w.scales, b);
    const auto y = nn::int8_gemm(x, packed, b);
    ASSERT_EQ(y.sizes(), expected.sizes());
    EXPECT_TRUE(torch::equal(y, expected))
        << "bias " << b.defined() << ": max difference " << (y - expected).abs().max().item<double>();
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, Int8GemmKernel,
                         ::testing::Values(std::make_tuple(1, 1, 1), std::make_tuple(5, 17, 3),
                                           std::make_tuple(6, 64, 4), std::make_tuple(7, 65, 5),
                                           std::make_tuple(13, 130, 37), std::make_tuple(97, 200, 513),
                                           std::make_tuple(200, 512, 512), std::make_tuple(320, 129, 2048),
                                           std::make_tuple(3, 40, 70), std::make_tuple(4, 33, 65),
                                           std::make_tuple(10, 512, 512), std::make_tuple(40, 256, 1000)));

TEST(Int8GemmKernel, KeepsLeadingDimensionsAndEmptyInputsAndIsTheSameOnOneThread) {
  if (!nn::int8_gemm_available()) GTEST_SKIP() << "this CPU has no AVX512-VNNI";
  const auto w = random_weight(70, 33);
  const nn::PackedInt8Weight packed(w.values, w.scales);
  const auto x = torch::randn({4, 50, 33});
  const auto y = nn::int8_gemm(x, packed);
  EXPECT_EQ(y.sizes(), (std::vector<int64_t>{4, 50, 70}));
  EXPECT_TRUE(torch::equal(y, nn::int8_gemm_reference(x, w.values, w.scales)));
  const int threads = at::get_num_threads();
  at::set_num_threads(1);
  const auto serial = nn::int8_gemm(x, packed);
  at::set_num_threads(threads);
  EXPECT_TRUE(torch::equal(serial, y));
  EXPECT_EQ(nn::int8_gemm(torch::randn({0, 33}), packed).sizes(), (std::vector<int64_t>{0, 70}));
  EXPECT_THROW(nn::int8_gemm(torch::randn({2, 32}), packed), c10::Error);
}

// A row range of the pack (a fused q|k|v weight's q, k or v, one pack for all three) is
// the same columns of the whole product to the last bit, with its part of the bias:
// ranges on panel (64-row) and vector (16-row) boundaries and inside them, one row, all rows.
TEST(Int8GemmKernel, ARowRangeEqualsTheSameColumnsOfTheWholeProduct) {
  if (!nn::int8_gemm_available()) GTEST_SKIP() << "this CPU has no AVX512-VNNI";
  const auto w = random_weight(200, 37);
  const nn::PackedInt8Weight packed(w.values, w.scales);
  const auto x = torch::randn({2, 13, 37}), bias = torch::randn({200});
  for (const auto& b : {bias, torch::Tensor()}) {
    const auto whole = nn::int8_gemm(x, packed, b);
    for (const auto& [first, count] : std::vector<std::pair<int64_t, int64_t>>{
             {0, 64}, {64, 128}, {128, 72}, {16, 32}, {5, 11}, {3, 150}, {70, 1}, {199, 1}, {0, 200}, {50, 0}}) {
      const auto part = nn::int8_gemm(x, packed, first, count, b.defined() ? b.narrow(0, first, count) : b);
      ASSERT_EQ(part.sizes(), (std::vector<int64_t>{2, 13, count}));
      EXPECT_TRUE(torch::equal(part, whole.narrow(-1, first, count)))
          << "rows [" << first << ", " << first + count << ") bias " << b.defined();
    }
  }
  EXPECT_THROW(nn::int8_gemm(x, packed, 190, 11), c10::Error);
}

// Every row read back from the packed layout is the row that was packed: 130 rows (three
// panels, the last one partial) of 37 inputs (a partial group of 4).
TEST(Int8Gemm, PackedRowsReadBackAsTheValuesGiven) {
  const auto w = random_weight(130, 37);
  const nn::PackedInt8Weight packed(w.values, w.scales);
  auto back = torch::empty({130, 37}, torch::kChar);
  for (int64_t n = 0; n < 130; ++n) packed.unpack_row(n, back[n].data_ptr<int8_t>());
  EXPECT_TRUE(torch::equal(back, w.values));
  EXPECT_THROW(packed.unpack_row(130, back[0].data_ptr<int8_t>()), c10::Error);
}

}  // namespace
