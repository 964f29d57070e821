// Weights converted for inference (nn/converted_weights.h) against naive formulas:
// bf16 products equal fp32 products of the bf16-rounded operands (fp32 accumulation);
// int8 products equal the product with the dequantized weight up to the activations'
// 8-bit rounding; row selections, row views and tied embedding lookups agree with the
// full weight.
#include "toolkit/nn/converted_weights.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <limits>

#include "toolkit/nn/int8_gemm.h"
#include "toolkit/nn/linear.h"

namespace {

using namespace csan;

torch::Tensor parameter(std::vector<int64_t> shape, uint64_t seed) {
  torch::manual_seed(seed);
  return torch::randn(shape).set_requires_grad(true);
}

TEST(ConvertedWeights, Bf16ProductIsTheFp32ProductOfRoundedOperandsAndReturnsFloat) {
  torch::NoGradGuard no_grad;
  auto w = parameter({24, 40}, 1), b = torch::randn({24});
  const auto x = torch::randn({3, 5, 40});
  const auto reference =
      torch::matmul(x.to(torch::kBFloat16).to(torch::kFloat), w.to(torch::kBFloat16).to(torch::kFloat).t()) +
      b.to(torch::kBFloat16).to(torch::kFloat);
  nn::convert_weight(w, nn::WeightPrecision::Bf16);
  EXPECT_EQ(w.scalar_type(), torch::kBFloat16);
  EXPECT_FALSE(w.requires_grad());
  EXPECT_TRUE(nn::is_converted(w));
  const auto y = nn::linear(x, w, b);
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
  const auto original = w.detach().clone();
  const auto x = torch::randn({7, 64});
  nn::convert_weight(w, nn::WeightPrecision::Int8);
  EXPECT_EQ(w.scalar_type(), torch::kChar);
  const auto scales = nn::int8_scales(w);
  ASSERT_EQ(scales.sizes(), (std::vector<int64_t>{32}));
  EXPECT_TRUE(torch::allclose(scales, original.abs().amax(1) / 127.0));
  const auto dequantized = w.to(torch::kFloat) * scales.unsqueeze(1);
  // Each weight is within half a step of its row's scale.
  EXPECT_LE(((dequantized - original).abs() - scales.unsqueeze(1) / 2).max().item<double>(), 1e-6);
  const auto y = nn::linear(x, w, b);
  const auto reference = torch::matmul(x, dequantized.t()) + b;
  // Activations are quantized per call to 8 bits (step max|x| / 127.5 at most): the error
  // of each output is bounded by half a step times the row's sum of |w|.
  const double step = 2 * x.abs().max().item<double>() / 255.0;
  const auto bound = dequantized.abs().sum(1) * step / 2 + 1e-4;
  EXPECT_TRUE(((y - reference).abs() <= bound.unsqueeze(0)).all().item<bool>());
  EXPECT_LT((y - reference).abs().max().item<double>(), 0.1 * reference.abs().max().item<double>());
}

TEST(ConvertedWeights, RowViewsRowSelectionsAndTiedEmbeddingsAgreeWithTheFullWeight) {
  torch::NoGradGuard no_grad;
  for (auto precision : {nn::WeightPrecision::Bf16, nn::WeightPrecision::Int8}) {
    auto w = parameter({30, 16}, 3);
    nn::convert_weight(w, precision);
    const auto x = torch::randn({4, 16});
    const auto full = nn::linear(x, w);
    // A row view (MultiheadAttention's q|k|v slices) is its own product of the same rows.
    const auto view = nn::linear(x, w.narrow(0, 10, 10));
    EXPECT_TRUE(torch::allclose(view, full.narrow(1, 10, 10), 1e-4, 1e-4));
    // A shortlist's rows.
    const auto rows = torch::tensor(std::vector<int64_t>{0, 2, 3, 17, 29});
    const auto selected = nn::select_weight_rows(w, rows);
    EXPECT_EQ(selected.scalar_type(), w.scalar_type());
    EXPECT_TRUE(torch::allclose(nn::linear(x, selected), full.index_select(1, rows), 1e-4, 1e-4));
    // Embedding rows come back as float, dequantized.
    const auto tokens = torch::tensor(std::vector<int64_t>{5, 0, 29});
    const auto embedded = nn::converted_embedding(w, tokens);
    EXPECT_EQ(embedded.scalar_type(), torch::kFloat);
    const auto expected =
        precision == nn::WeightPrecision::Bf16
            ? w.index_select(0, tokens).to(torch::kFloat)
            : w.index_select(0, tokens).to(torch::kFloat) * nn::int8_scales(w).index_select(0, tokens).unsqueeze(1);
    EXPECT_TRUE(torch::equal(embedded, expected));
  }
}

// Decoding frees an int8 weight's plain values once its rows are all packed for csan's
// kernel (release_packed_int8_values). Products, row views, shortlist rows and tied
// embedding lookups then come from the packs, and equal those of an unreleased twin.
TEST(ConvertedWeights, ReleasedInt8ValuesAreReadBackFromThePacksUnchanged) {
  if (!nn::int8_gemm_available())
    GTEST_SKIP() << "csan's int8 kernel needs AVX512-VNNI (LibTorch's engine keeps the values)";
  torch::NoGradGuard no_grad;
  auto kept = parameter({130, 24}, 9), released = parameter({130, 24}, 9);
  nn::convert_weight(kept, nn::WeightPrecision::Int8);
  nn::convert_weight(released, nn::WeightPrecision::Int8);
  torch::nn::Module holder;
  holder.register_parameter("weight", released, /*requires_grad=*/false);
  nn::release_packed_int8_values(holder);
  const auto x = torch::randn({5, 24});
  const auto tokens = torch::tensor(std::vector<int64_t>{129, 0, 64, 7});
  const auto embedded = nn::converted_embedding(kept, tokens);
  // Rows [0, 64) and [64, 130) as two views (a fused projection's q and k|v): released only
  // when both are packed.
  EXPECT_TRUE(torch::equal(nn::linear(x, released.narrow(0, 0, 64)), nn::linear(x, kept.narrow(0, 0, 64))));
  EXPECT_FALSE(nn::int8_values_released(released));
  EXPECT_TRUE(torch::equal(nn::linear(x, released.narrow(0, 64, 66)), nn::linear(x, kept.narrow(0, 64, 66))));
  ASSERT_TRUE(nn::int8_values_released(released));
  EXPECT_EQ(released.sizes(), torch::IntArrayRef({130, 24}));  // the parameter keeps its shape
  EXPECT_TRUE(torch::equal(nn::converted_embedding(released, tokens), embedded));
  const auto rows = torch::tensor(std::vector<int64_t>{3, 64, 65, 129});
  const auto selected = nn::select_weight_rows(released, rows);
  EXPECT_TRUE(torch::equal(selected, kept.index_select(0, rows)));
  EXPECT_TRUE(torch::equal(nn::linear(x, selected), nn::linear(x, nn::select_weight_rows(kept, rows))));
  // A view never packed before is packed from the packs.
  EXPECT_TRUE(torch::equal(nn::linear(x, released), nn::linear(x, kept)));
  EXPECT_FALSE(nn::int8_values_released(kept));  // not asked to
}

TEST(ConvertedWeights, TheRecorderSeesWeightsThatReachLinearAndPlainBf16ModelsAreNotConverted) {
  torch::NoGradGuard no_grad;
  auto used = torch::randn({3, 4}), unused = torch::randn({3, 4});
  nn::LinearWeightRecorder recorder;
  nn::linear(torch::randn({2, 4}), used.narrow(0, 1, 2));
  EXPECT_TRUE(recorder.is_weight(used)) << "a row view counts for its parameter";
  EXPECT_FALSE(recorder.is_weight(unused));
  EXPECT_FALSE(nn::is_converted(torch::randn({3, 4}).to(torch::kBFloat16))) << "bf16 training keeps its own path";
}

// A recorder that skips products (a model whose weights a checkpoint is about to fill)
// still records, and its products are zeros that never read the weight: a NaN weight would
// show through any product.
TEST(ConvertedWeights, ARecorderThatSkipsProductsRecordsWithoutReadingTheWeight) {
  torch::NoGradGuard no_grad;
  const auto weight = torch::full({5, 4}, std::numeric_limits<float>::quiet_NaN());
  {
    nn::LinearWeightRecorder recorder(/*skip_products=*/true);
    EXPECT_TRUE(nn::LinearWeightRecorder::products_skipped());
    const auto y = nn::linear(torch::randn({2, 3, 4}), weight, torch::randn({5}));
    EXPECT_EQ(y.sizes(), (std::vector<int64_t>{2, 3, 5}));
    EXPECT_TRUE(torch::equal(y, torch::zeros({2, 3, 5})));
    EXPECT_TRUE(recorder.is_weight(weight));
    {
      nn::LinearWeightRecorder inner;  // the innermost decides
      EXPECT_FALSE(nn::LinearWeightRecorder::products_skipped());
    }
  }
  EXPECT_FALSE(nn::LinearWeightRecorder::products_skipped());
  EXPECT_TRUE(torch::isnan(nn::linear(torch::randn({1, 4}), weight)).all().item<bool>());
}

// Where csan's AVX512-VNNI kernel runs, nn::linear's int8 product is exactly the kernel's
// arithmetic (int8_gemm_reference); LibTorch's quantized engine, the path of other CPUs,
// stays within its own activation rounding of the dequantized product (per tensor, 8 or 7 bits).
TEST(ConvertedWeights, Int8ProductsAreCsansKernelWhereItRunsAndLibTorchsEngineAgrees) {
  torch::NoGradGuard no_grad;
  auto w = parameter({48, 80}, 4);
  const auto b = torch::randn({48});
  const auto x = torch::randn({2, 9, 80});
  nn::convert_weight(w, nn::WeightPrecision::Int8);
  const auto scales = nn::int8_scales(w);
  const auto kernel_arithmetic = nn::int8_gemm_reference(x, w, scales, b);
  const auto y = nn::linear(x, w, b);
  if (nn::select_int8_products() == "csan avx512-vnni") {
    EXPECT_TRUE(nn::int8_gemm_available());
    EXPECT_TRUE(torch::equal(y, kernel_arithmetic));
  } else {
    EXPECT_FALSE(nn::int8_gemm_available());
  }
  nn::select_quantized_engine();
  const auto libtorch = nn::libtorch_int8_linear(x, w, b);
  const auto exact = torch::matmul(x, (w.to(torch::kFloat) * scales.unsqueeze(1)).t()) + b;
  const double step = 2 * x.abs().max().item<double>() / (nn::int8_activations_reduced() ? 127.0 : 255.0);
  const auto bound = (w.to(torch::kFloat) * scales.unsqueeze(1)).abs().sum(1) * step / 2 + 1e-4;
  EXPECT_TRUE(((libtorch - exact).abs() <= bound).all().item<bool>());
  EXPECT_TRUE(((kernel_arithmetic - exact).abs() <= bound).all().item<bool>());
}

TEST(ConvertedWeights, TheQuantizedEngineIsOneThisLibTorchOffers) {
  const std::string engine = nn::select_quantized_engine();
  EXPECT_TRUE(engine == "x86" || engine == "fbgemm" || engine == "onednn" || engine == "qnnpack") << engine;
}

}  // namespace
