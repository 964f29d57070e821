// Weights converted for inference (the projection kinds, nn/projection_kind.h) against
// naive formulas: bf16 products equal fp32 products of the bf16-rounded operands (fp32
// accumulation); int8 products equal the product with the dequantized weight up to the
// activations' 8-bit rounding; row ranges, row selections and tied embedding lookups
// agree with the full weight; csan's int8 kernel keeps only its pack and reads every row
// back from it unchanged; converting a module's projection takes the weight out of it.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "toolkit/nn/dense.h"
#include "toolkit/nn/int8_gemm.h"
#include "toolkit/nn/int8_projection.h"
#include "toolkit/nn/projection_kind.h"

namespace {

using namespace csan;

torch::Tensor parameter(std::vector<int64_t> shape, uint64_t seed) {
  torch::manual_seed(seed);
  return torch::randn(shape).set_requires_grad(true);
}

std::shared_ptr<const nn::ProjectionKernel> converted(const torch::Tensor& w, nn::Precision precision) {
  torch::NoGradGuard no_grad;
  return nn::projection_kind(precision).convert(w);
}

TEST(ConvertedWeights, Bf16ProductIsTheFp32ProductOfRoundedOperandsAndReturnsFloat) {
  torch::NoGradGuard no_grad;
  auto w = parameter({24, 40}, 1), b = torch::randn({24});
  const auto x = torch::randn({3, 5, 40});
  const auto reference =
      torch::matmul(x.to(torch::kBFloat16).to(torch::kFloat), w.to(torch::kBFloat16).to(torch::kFloat).t()) +
      b.to(torch::kBFloat16).to(torch::kFloat);
  const auto kernel = converted(w, nn::Precision::bf16);
  EXPECT_EQ(kernel->precision(), nn::Precision::bf16);
  EXPECT_EQ(kernel->stored_weight().scalar_type(), torch::kBFloat16);
  EXPECT_FALSE(kernel->stored_weight().requires_grad());
  EXPECT_TRUE(torch::equal(kernel->stored_weight(), w.to(torch::kBFloat16)));
  const auto y = kernel->multiply(x, b);
  EXPECT_EQ(y.scalar_type(), torch::kFloat);
  EXPECT_EQ(y.sizes(), (std::vector<int64_t>{3, 5, 24}));
  // The product leaves the GEMM rounded to bf16 (8 significant bits): within half a unit
  // in the last place, 2^-8 of its magnitude, plus fp32 summation-order noise.
  EXPECT_TRUE(((y - reference).abs() <= reference.abs() / 256 + 1e-4).all().item<bool>())
      << ((y - reference).abs() - reference.abs() / 256).max().item<double>();
}

TEST(ConvertedWeights, Int8UsesPerRowScalesAndMatchesTheDequantizedWeight) {
  torch::NoGradGuard no_grad;
  auto w = parameter({32, 64}, 2), b = torch::randn({32});
  w[3].mul_(100.0);  // one row far larger: per-row scales keep the others precise
  const auto x = torch::randn({7, 64});
  const auto kernel = converted(w, nn::Precision::int8);
  const auto values = kernel->stored_weight();
  EXPECT_EQ(values.scalar_type(), torch::kChar);
  const auto scales = kernel->scales();
  ASSERT_EQ(scales.sizes(), (std::vector<int64_t>{32}));
  EXPECT_TRUE(torch::allclose(scales, w.abs().amax(1) / 127.0));
  const auto dequantized = values.to(torch::kFloat) * scales.unsqueeze(1);
  // Each weight is within half a step of its row's scale.
  EXPECT_LE(((dequantized - w).abs() - scales.unsqueeze(1) / 2).max().item<double>(), 1e-6);
  const auto y = kernel->multiply(x, b);
  const auto reference = torch::matmul(x, dequantized.t()) + b;
  // Activations are quantized per call to 8 bits (step max|x| / 127.5 at most): the error
  // of each output is bounded by half a step times the row's sum of |w|.
  const double step = 2 * x.abs().max().item<double>() / 255.0;
  const auto bound = dequantized.abs().sum(1) * step / 2 + 1e-4;
  EXPECT_TRUE(((y - reference).abs() <= bound.unsqueeze(0)).all().item<bool>());
  EXPECT_LT((y - reference).abs().max().item<double>(), 0.1 * reference.abs().max().item<double>());
}

// For every kind that converts, on each int8 engine.
std::vector<std::pair<std::string, std::shared_ptr<const nn::ProjectionKernel>>> kernels_of(const torch::Tensor& w) {
  torch::NoGradGuard no_grad;
  std::vector<std::pair<std::string, std::shared_ptr<const nn::ProjectionKernel>>> kernels;
  kernels.emplace_back("bf16", converted(w, nn::Precision::bf16));
  const auto int8 = nn::quantize_per_row(w);
  kernels.emplace_back("int8 libtorch", nn::int8_kernel(int8, nn::Int8Engine::libtorch));
  if (nn::int8_gemm_available()) kernels.emplace_back("int8 csan", nn::int8_kernel(int8, nn::Int8Engine::csan_vnni));
  return kernels;
}

TEST(ConvertedWeights, RowRangesRowSelectionsAndTiedEmbeddingsAgreeWithTheFullWeight) {
  torch::NoGradGuard no_grad;
  const auto w = parameter({30, 16}, 3), b = torch::randn({30});
  for (const auto& [name, kernel] : kernels_of(w)) {
    SCOPED_TRACE(name);
    const auto x = torch::randn({4, 16});
    const auto full = kernel->multiply(x, b);
    // A row range (MultiheadAttention's q|k|v slices) is its own product of the same rows.
    const auto range = kernel->multiply(x, b.narrow(0, 10, 10), 10, 10);
    EXPECT_TRUE(torch::allclose(range, full.narrow(1, 10, 10), 1e-4, 1e-4));
    // A shortlist's rows, in the same precision.
    const auto rows = torch::tensor(std::vector<int64_t>{0, 2, 3, 17, 29});
    const auto selected = kernel->select_rows(rows);
    EXPECT_EQ(selected->precision(), kernel->precision());
    EXPECT_EQ(selected->rows(), 5);
    EXPECT_TRUE(torch::allclose(selected->multiply(x), kernel->multiply(x).index_select(1, rows), 1e-4, 1e-4));
    // Embedding rows come back as float, dequantized.
    const auto tokens = torch::tensor(std::vector<int64_t>{5, 0, 29, 5}).view({2, 2});
    const auto embedded = kernel->embedding(tokens);
    EXPECT_EQ(embedded.scalar_type(), torch::kFloat);
    EXPECT_EQ(embedded.sizes(), (std::vector<int64_t>{2, 2, 16}));
    auto expected = kernel->stored_weight().index_select(0, tokens.reshape(-1)).to(torch::kFloat);
    if (kernel->scales().defined())
      expected = expected * kernel->scales().index_select(0, tokens.reshape(-1)).unsqueeze(1);
    EXPECT_TRUE(torch::equal(embedded, expected.view({2, 2, 16})));
  }
}

// csan's int8 kernel keeps only its pack (one for the whole weight): products of any row
// range, shortlist rows, tied embedding lookups and the stored values are read back from it
// and equal what the plain values give (LibTorch's engine keeps them), to the last bit.
TEST(ConvertedWeights, CsansInt8KernelReadsEveryRowBackFromItsPackUnchanged) {
  if (!nn::int8_gemm_available()) GTEST_SKIP() << "csan's int8 kernel needs AVX512-VNNI";
  torch::NoGradGuard no_grad;
  const auto w = parameter({130, 24}, 9);
  const auto int8 = nn::quantize_per_row(w);
  const auto packed = nn::int8_kernel(int8, nn::Int8Engine::csan_vnni);
  const auto plain = nn::int8_kernel(int8, nn::Int8Engine::libtorch);
  EXPECT_EQ(packed->engine(), "csan avx512-vnni");
  EXPECT_TRUE(torch::equal(packed->stored_weight(), int8.values));
  EXPECT_TRUE(torch::equal(packed->scales(), int8.scales));
  const auto x = torch::randn({5, 24}), b = torch::randn({130});
  // Rows [0, 64) and [64, 130): a fused projection's q and k|v; [10, 77): a range inside
  // the pack's panels of 64 rows and 16-row vectors.
  const auto whole = packed->multiply(x, b);
  EXPECT_TRUE(torch::equal(whole, nn::int8_gemm_reference(x, int8.values, int8.scales, b)));
  for (const auto& [first, count] : std::vector<std::pair<int64_t, int64_t>>{{0, 64}, {64, 66}, {10, 67}, {129, 1}}) {
    EXPECT_TRUE(
        torch::equal(packed->multiply(x, b.narrow(0, first, count), first, count), whole.narrow(1, first, count)))
        << first << " " << count;
    EXPECT_TRUE(torch::equal(
        packed->multiply(x, {}, first, count),
        nn::int8_gemm_reference(x, int8.values.narrow(0, first, count), int8.scales.narrow(0, first, count))))
        << first << " " << count;
  }
  const auto tokens = torch::tensor(std::vector<int64_t>{129, 0, 64, 7});
  EXPECT_TRUE(torch::equal(packed->embedding(tokens), plain->embedding(tokens)));
  const auto rows = torch::tensor(std::vector<int64_t>{3, 64, 65, 129});
  const auto selected = packed->select_rows(rows);
  EXPECT_TRUE(torch::equal(selected->stored_weight(), int8.values.index_select(0, rows)));
  EXPECT_TRUE(torch::equal(selected->multiply(x), nn::int8_gemm_reference(x, int8.values.index_select(0, rows),
                                                                          int8.scales.index_select(0, rows))));
}

// Converting a projection gives it the kernel and takes the weight parameter out of its
// module: parameters() no longer lists it, products run through the kernel, and
// set_weight puts a stored form back in its place (what an inference checkpoint saves and loads).
TEST(ConvertedWeights, ConvertingAProjectionTakesItsWeightOutOfTheModule) {
  torch::NoGradGuard no_grad;
  torch::manual_seed(5);
  nn::Dense dense(16, 8);
  dense->weight.normal_();
  dense->bias.normal_();
  const auto x = torch::randn({3, 16});
  const auto fp32 = dense(x);
  EXPECT_EQ(dense->parameters().size(), 2u);
  const auto sites = dense->projection_sites();
  ASSERT_EQ(sites.size(), 1u);
  const auto kernel = nn::projection_kind(nn::Precision::bf16).convert(dense->weight);
  dense->convert(sites[0], kernel);
  EXPECT_FALSE(dense->weight.defined());
  const auto names = dense->named_parameters().keys();
  EXPECT_EQ(names, std::vector<std::string>{"bias"});
  EXPECT_TRUE(torch::equal(dense(x), kernel->multiply(x, dense->bias)));
  EXPECT_TRUE(torch::allclose(dense(x), fp32, 0.02, 0.02));
  dense->set_weight(sites[0], kernel->stored_weight());
  EXPECT_EQ(dense->named_parameters().keys(), (std::vector<std::string>{"weight", "bias"}));
  EXPECT_EQ(dense->named_parameters()["weight"].scalar_type(), torch::kBFloat16);
  EXPECT_TRUE(torch::equal(dense(x), kernel->multiply(x, dense->bias))) << "the kernel still multiplies";
}

// Where csan's AVX512-VNNI kernel runs, the int8 kind's product is exactly the kernel's
// arithmetic (int8_gemm_reference); LibTorch's quantized engine, the path of other CPUs,
// stays within its own activation rounding of the dequantized product (per tensor, 8 or 7 bits).
TEST(ConvertedWeights, Int8ProductsAreCsansKernelWhereItRunsAndLibTorchsEngineAgrees) {
  torch::NoGradGuard no_grad;
  auto w = parameter({48, 80}, 4);
  const auto b = torch::randn({48});
  const auto x = torch::randn({2, 9, 80});
  const auto kernel = converted(w, nn::Precision::int8);
  const auto values = kernel->stored_weight(), scales = kernel->scales();
  const auto kernel_arithmetic = nn::int8_gemm_reference(x, values, scales, b);
  const auto y = kernel->multiply(x, b);
  if (nn::int8_engine() == nn::Int8Engine::csan_vnni) {
    EXPECT_TRUE(nn::int8_gemm_available());
    EXPECT_EQ(kernel->engine(), "csan avx512-vnni");
    EXPECT_TRUE(torch::equal(y, kernel_arithmetic));
  } else {
    EXPECT_NE(kernel->engine(), "csan avx512-vnni");
  }
  const auto libtorch = nn::int8_kernel({values, scales}, nn::Int8Engine::libtorch)->multiply(x, b);
  const auto exact = torch::matmul(x, (values.to(torch::kFloat) * scales.unsqueeze(1)).t()) + b;
  const double step = 2 * x.abs().max().item<double>() / (nn::int8_activations_reduced() ? 127.0 : 255.0);
  const auto bound = (values.to(torch::kFloat) * scales.unsqueeze(1)).abs().sum(1) * step / 2 + 1e-4;
  EXPECT_TRUE(((libtorch - exact).abs() <= bound).all().item<bool>());
  EXPECT_TRUE(((kernel_arithmetic - exact).abs() <= bound).all().item<bool>());
}

TEST(ConvertedWeights, TheQuantizedEngineIsOneThisLibTorchOffers) {
  const std::string engine = nn::select_quantized_engine();
  EXPECT_TRUE(engine == "x86" || engine == "fbgemm" || engine == "onednn" || engine == "qnnpack") << engine;
}

}  // namespace
