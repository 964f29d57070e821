// bf16 products on a CPU without AVX-512 (nn::bf16_products_emulated): the fp32 emulation
// must give what LibTorch's own bf16 product gives (same roundings, fp32 accumulation),
// and it must be chosen exactly where LibTorch has no oneDNN bf16 GEMM.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "tests/support/cpuinfo_flags.h"
#include "toolkit/nn/half_float_projection.h"
#include "toolkit/nn/projection_kind.h"

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

// An emulated bf16 kernel multiplies (whole, row ranges, shortlist rows) as
// bf16_linear_in_fp32 does, on any CPU; the bf16 kind builds one exactly where the CPU
// lacks AVX-512.
TEST(Bf16Emulation, TheEmulatedKernelMultipliesAsTheEmulationAndTheKindTakesItOnSuchACpu) {
  torch::NoGradGuard no_grad;
  torch::manual_seed(8);
  const auto w = torch::randn({16, 32});
  const auto b = torch::randn({16}), x = torch::randn({5, 32});
  const auto bf16 = w.to(torch::kBFloat16);
  const auto emulated = nn::half_float_kernel(w, torch::kBFloat16, /*emulated=*/true);
  EXPECT_TRUE(torch::equal(emulated->multiply(x, b), nn::bf16_linear_in_fp32(x, bf16, b)));
  EXPECT_TRUE(torch::equal(emulated->multiply(x, b.narrow(0, 4, 8), 4, 8),
                           nn::bf16_linear_in_fp32(x, bf16.narrow(0, 4, 8), b.narrow(0, 4, 8))));
  const auto rows = torch::tensor(std::vector<int64_t>{1, 7, 15});
  EXPECT_TRUE(torch::equal(emulated->select_rows(rows)->multiply(x),
                           nn::bf16_linear_in_fp32(x, bf16.index_select(0, rows), {})));
  const auto chosen = nn::projection_kind(nn::Precision::bf16).convert(w);
  const auto native = nn::half_float_kernel(w, torch::kBFloat16, /*emulated=*/false);
  EXPECT_TRUE(torch::equal(chosen->multiply(x, b), (nn::bf16_products_emulated() ? emulated : native)->multiply(x, b)));
}

}  // namespace
