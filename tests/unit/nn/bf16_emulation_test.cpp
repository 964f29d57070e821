// bf16 products on a CPU without AVX-512 (nn::bf16_products_emulated): the fp32 emulation
// must give what LibTorch's own bf16 product gives (same roundings, fp32 accumulation),
// and it must be chosen exactly where LibTorch has no oneDNN bf16 GEMM.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "tests/support/cpuinfo_flags.h"
#include "toolkit/nn/converted_weights.h"
#include "toolkit/nn/linear.h"

namespace {

using namespace csan;

TEST(Bf16Emulation, ChosenExactlyWhereTheCpuLacksAvx512) {
  const auto flags = csan::testing::cpuinfo_flags();
  if (!flags) GTEST_SKIP() << "no /proc/cpuinfo";
  const auto has = [&](const char* flag) { return flags->find(std::string(" ") + flag + " ") != std::string::npos; };
  EXPECT_EQ(nn::bf16_products_emulated(), !(has("avx512bw") && has("avx512vl") && has("avx512dq")));
}

TEST(Bf16Emulation, EqualsLibTorchsBf16ProductUpToTheLastBit) {
  torch::NoGradGuard no_grad;
  torch::manual_seed(7);
  // Small enough for LibTorch's reference bf16 loop on any CPU.
  const auto w = torch::randn({48, 64}).to(torch::kBFloat16), b = torch::randn({48});
  const auto x = torch::randn({2, 9, 64});
  const auto native = at::linear(x.to(torch::kBFloat16), w, b.to(torch::kBFloat16)).to(torch::kFloat);
  const auto emulated = nn::bf16_linear_in_fp32(x, w, b);
  EXPECT_EQ(emulated.scalar_type(), torch::kFloat);
  EXPECT_EQ(emulated.sizes(), native.sizes());
  // Both round one fp32 sum to bf16; summation order alone can move a result across a
  // rounding boundary: one unit in the last place (2^-7 of the magnitude) at most, rarely.
  EXPECT_TRUE(((emulated - native).abs() <= native.abs() / 128 + 1e-6).all().item<bool>());
  const double same = (emulated == native).to(torch::kFloat).mean().item<double>();
  EXPECT_GT(same, 0.95) << same;
  // Without a bias too.
  EXPECT_TRUE(torch::allclose(nn::bf16_linear_in_fp32(x, w, {}),
                              at::linear(x.to(torch::kBFloat16), w, {}).to(torch::kFloat), 1.0 / 64, 1e-3));
}

TEST(Bf16Emulation, ConvertedLinearTakesItOnSuchACpu) {
  if (!nn::bf16_products_emulated()) GTEST_SKIP() << "this CPU multiplies bf16 with oneDNN";
  torch::NoGradGuard no_grad;
  torch::manual_seed(8);
  auto w = torch::randn({16, 32});
  const auto b = torch::randn({16}), x = torch::randn({5, 32});
  nn::convert_weight(w, nn::WeightPrecision::Bf16);
  EXPECT_TRUE(torch::equal(nn::linear(x, w, b), nn::bf16_linear_in_fp32(x, w, b)));
}

}  // namespace
