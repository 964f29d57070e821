#include "toolkit/nn/linear.h"
#include "toolkit/nn/onednn_sgemm.h"

#include <ATen/Parallel.h>
#include <ATen/autocast_mode.h>
#include <gtest/gtest.h>
#include <torch/torch.h>
#include <torch/version.h>

#include <thread>

namespace csan::nn {
namespace {

void set_cpu_autocast(bool enabled) {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
  at::autocast::set_autocast_enabled(at::kCPU, enabled);
#else
  at::autocast::set_cpu_enabled(enabled);
#endif
}

void expect_close(const torch::Tensor& got, const torch::Tensor& want, const std::string& what) {
  ASSERT_EQ(got.sizes(), want.sizes()) << what;
  if (want.numel() == 0) return;
  const double scale = want.abs().max().item<double>() + 1.0;
  EXPECT_LT((got - want).abs().max().item<double>(), 1e-5 * scale) << what;
}

// Every remainder of the kernel's blocking: rows modulo 3 (row tiles), outputs modulo 4
// (output tiles), depth modulo 8 (vector lanes), with and without a bias.
TEST(FewRowsLinear, EqualsTheBlasProductForEveryRemainder) {
  torch::manual_seed(3);
  torch::NoGradGuard no_grad;
  for (int64_t rows : {0, 1, 2, 3, 4, 5, 7, 16, 17})
    for (int64_t depth : {1, 8, 13, 37, 256})
      for (int64_t outputs : {1, 3, 4, 10, 33}) {
        const torch::Tensor x = torch::randn({rows, depth}), w = torch::randn({outputs, depth});
        const torch::Tensor b = torch::randn({outputs});
        const std::string what = std::to_string(rows) + "x" + std::to_string(depth) + " -> " + std::to_string(outputs);
        expect_close(few_rows_linear(x, w, b), torch::nn::functional::linear(x, w, b), what + " with bias");
        expect_close(few_rows_linear(x, w), torch::nn::functional::linear(x, w), what + " without bias");
      }
}

TEST(FewRowsLinear, KeepsLeadingDimensionsAndReadsStridedInputs) {
  torch::NoGradGuard no_grad;
  const torch::Tensor x = torch::randn({5, 2, 24}).transpose(0, 1);  // [2, 5, 24], not contiguous
  const torch::Tensor w = torch::randn({72, 48}).narrow(1, 8, 24);   // rows 48 apart
  const torch::Tensor b = torch::randn({72});
  expect_close(few_rows_linear(x, w, b), torch::nn::functional::linear(x, w, b), "strided");
}

TEST(FewRowsLinear, SplitsOutputsOverThreadsWithTheSameResult) {
  torch::NoGradGuard no_grad;
  const int threads = at::get_num_threads();
  const torch::Tensor x = torch::randn({6, 256}), w = torch::randn({8000, 256}), b = torch::randn({8000});
  at::set_num_threads(1);
  const torch::Tensor one = few_rows_linear(x, w, b);
  at::set_num_threads(2);
  const torch::Tensor two = few_rows_linear(x, w, b);
  at::set_num_threads(threads);
  EXPECT_TRUE(torch::equal(one, two)) << "every output is one thread's dot product either way";
}

// The dispatcher: a few rows in inference take the kernel; training (autograd), many
// rows and other dtypes keep at::linear, gradients included.
TEST(Linear, UsesTheKernelOnlyWhereNoGradientIsNeeded) {
  const torch::Tensor w = torch::randn({12, 16}, torch::requires_grad()), b = torch::randn({12});
  const torch::Tensor x = torch::randn({kFewRowsLimit, 16});
  torch::Tensor y = linear(x, w, b);
  ASSERT_TRUE(y.requires_grad());
  y.sum().backward();
  expect_close(w.grad(), x.sum(0).expand({12, 16}), "weight gradient");
  {
    torch::NoGradGuard no_grad;
    expect_close(linear(x, w, b), torch::nn::functional::linear(x, w, b), "few rows, no grad");
    const torch::Tensor many = torch::randn({kFewRowsLimit + 1, 16});
    expect_close(linear(many, w, b), torch::nn::functional::linear(many, w, b), "many rows");
    const torch::Tensor xd = x.to(torch::kDouble), wd = w.detach().to(torch::kDouble), bd = b.to(torch::kDouble);
    EXPECT_EQ(linear(xd, wd, bd).scalar_type(), torch::kDouble);
    // CPU autocast decides the product's dtype, as for any other linear layer.
    set_cpu_autocast(true);
    const torch::Tensor under_autocast = linear(x, w.detach(), b);
    set_cpu_autocast(false);
    EXPECT_EQ(under_autocast.scalar_type(), torch::kBFloat16);
  }
}

// oneDNN's sgemm (where the process has it: Debian's LibTorch loads libdnnl) against
// LibTorch's product: leading dimensions, strided inputs, with and without a bias, no rows.
TEST(OnednnLinear, EqualsLibTorchsProductWhereTheProcessHasIt) {
  if (!onednn_sgemm_available()) GTEST_SKIP() << "no dnnl_sgemm in this process (a LibTorch with oneDNN built in)";
  torch::manual_seed(4);
  torch::NoGradGuard no_grad;
  for (int64_t rows : {0, 1, 17, 320})
    for (int64_t outputs : {1, 33, 1000}) {
      const torch::Tensor x = torch::randn({rows, 256}), w = torch::randn({outputs, 256}), b = torch::randn({outputs});
      const std::string what = std::to_string(rows) + " rows -> " + std::to_string(outputs);
      const torch::Tensor b_before = b.clone();
      const torch::Tensor y = onednn_linear(x, w, b);
      EXPECT_TRUE(torch::equal(b, b_before)) << what << ": the bias changed";
      expect_close(y, torch::nn::functional::linear(x, w, b), what + " with bias");
      expect_close(onednn_linear(x, w), torch::nn::functional::linear(x, w), what + " without bias");
    }
  const torch::Tensor x = torch::randn({40, 3, 24}).transpose(0, 1);  // [3, 40, 24], not contiguous
  const torch::Tensor w = torch::randn({72, 48}).narrow(1, 8, 24);    // rows 48 apart
  const torch::Tensor b = torch::randn({72});
  expect_close(onednn_linear(x, w, b), torch::nn::functional::linear(x, w, b), "strided, leading dimensions");
  // nn::linear sends inference products of any number of rows here (the same bits).
  EXPECT_TRUE(torch::equal(linear(x, w, b), onednn_linear(x, w, b)));
  const torch::Tensor one_row = torch::randn({1, 24});
  EXPECT_TRUE(torch::equal(linear(one_row, w, b), onednn_linear(one_row, w, b)));
  EXPECT_THROW(onednn_linear(x, w.narrow(1, 0, 23)), c10::Error);  // 24 features, a weight of 23
}

// 2 x rows x in x out per product, leading dimensions folded into rows, only while a
// counter lives on this thread, and only by the innermost of nested counters.
TEST(LinearFlopCounter, CountsEachProductsOperationsWhileAlive) {
  const torch::Tensor w = torch::randn({12, 16}), x = torch::randn({2, 5, 16});
  nn::linear(x, w);  // no counter: nothing to count into
  LinearFlopCounter outer;
  nn::linear(x, w);
  EXPECT_DOUBLE_EQ(outer.flops(), 2.0 * 10 * 16 * 12);
  {
    LinearFlopCounter inner;
    nn::linear(torch::randn({3, 16}), w);
    EXPECT_DOUBLE_EQ(inner.flops(), 2.0 * 3 * 16 * 12);
  }
  EXPECT_DOUBLE_EQ(outer.flops(), 2.0 * 10 * 16 * 12);
  double other_thread = -1;
  std::thread([&] {
    LinearFlopCounter own;
    nn::linear(x, w);
    other_thread = own.flops();
  }).join();
  EXPECT_DOUBLE_EQ(other_thread, 2.0 * 10 * 16 * 12);
  EXPECT_DOUBLE_EQ(outer.flops(), 2.0 * 10 * 16 * 12);  // the other thread's product is not ours
}

}  // namespace
}  // namespace csan::nn
