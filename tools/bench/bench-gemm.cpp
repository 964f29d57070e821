// The matrix-product peak of this CPU as LibTorch reaches it: a plain at::mm loop per
// dtype, on the shapes a training step multiplies (tokens x d by d x ffn, and the output
// projection), so that bench-train's achieved GFLOP/s can be read as a fraction of it.
//   bench-gemm [--tokens 4096] [--dims 256,1024,8000] [--seconds 3] [--dtypes fp32,bf16]
// Prints GFLOP/s for every (dtype, shape) and the best per dtype (the peak).
// Decoding's int8 products (csan-generate --precision int8), x [tokens, k] float by an int8
// weight [n, k], activations quantized per call: --dtypes int8 (csan's AVX512-VNNI kernel,
// nn/int8_gemm.h) and int8-libtorch (LibTorch's quantized::linear_dynamic), e.g. a decoder
// step of 64 sentences x beam 5: --tokens 320 --dims 256,1024,8000 --dtypes fp32,int8,int8-libtorch
// Decoding's float products (nn::linear in inference): --dtypes fp32-onednn,fp32-few-rows,
// e.g. one sentence's beam of 5: --tokens 5 --dims 512,2048,9000
#include <torch/torch.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "comma_list.h"
#include "repeat_timing.h"
#include "toolkit/nn/int8_gemm.h"
#include "toolkit/nn/int8_projection.h"
#include "toolkit/nn/linear.h"
#include "toolkit/nn/onednn_sgemm.h"

namespace po = boost::program_options;

namespace {

torch::ScalarType dtype_of(const std::string& name) {
  if (name == "fp32") return torch::kFloat;
  if (name == "bf16") return torch::kBFloat16;
  throw std::runtime_error("--dtypes: unknown dtype '" + name +
                           "' (fp32, bf16, int8, int8-libtorch, fp32-onednn, fp32-few-rows)");
}

// GFLOP/s of m x k x n, `product` repeated for about `seconds`.
template <typename Product>
double rate_of(Product product, int64_t m, int64_t k, int64_t n, double seconds) {
  const csan::bench::Repeats r = csan::bench::repeat_for(seconds, product);
  return 2.0 * m * k * n * r.calls / r.seconds / 1e9;
}

// The int8 products of inference: float x [m, k] by a converted int8 weight [n, k].
double int8_gflops(int64_t m, int64_t k, int64_t n, bool libtorch, double seconds) {
  torch::NoGradGuard no_grad;
  // Decoding's activations change at every call, and with them their quantization: each
  // call scales the input slightly (a pass over m x k values, 1/n of the product's work), so
  // that, as in decoding, no two calls share a scale. (LibTorch's onednn path compiles a new
  // primitive for each new scale and zero point; one repeated input would hide that.)
  auto x = torch::randn({m, k});
  int64_t turn = 0;
  auto next = [&]() -> const torch::Tensor& { return x.mul_(++turn % 2 ? 1.001 : 1 / 1.0007); };
  const auto w = csan::nn::quantize_per_row(torch::randn({n, k}));
  const auto bias = torch::randn({n});
  if (libtorch) {
    const auto kernel = csan::nn::int8_kernel(w, csan::nn::Int8Engine::libtorch);
    return rate_of([&] { kernel->multiply(next(), bias); }, m, k, n, seconds);
  }
  if (!csan::nn::int8_gemm_available()) throw std::runtime_error("--dtypes int8: this CPU has no AVX512-VNNI");
  const csan::nn::PackedInt8Weight packed(w.values, w.scales);
  return rate_of([&] { csan::nn::int8_gemm(next(), packed, bias); }, m, k, n, seconds);
}

// Inference's float products as nn::linear runs them, x [m, k] by a weight [n, k] with a
// bias: oneDNN's sgemm (nn/onednn_sgemm.h) or csan's kernel for a few rows (nn/linear.h).
double linear_gflops(int64_t m, int64_t k, int64_t n, bool few_rows, double seconds) {
  torch::NoGradGuard no_grad;
  if (!few_rows && !csan::nn::onednn_sgemm_available())
    throw std::runtime_error("--dtypes fp32-onednn: no oneDNN sgemm in this process");
  const auto x = torch::randn({m, k}), w = torch::randn({n, k}), bias = torch::randn({n});
  if (few_rows) return rate_of([&] { csan::nn::few_rows_linear(x, w, bias); }, m, k, n, seconds);
  return rate_of([&] { csan::nn::onednn_linear(x, w, bias); }, m, k, n, seconds);
}

// GFLOP/s of (m x k) @ (k x n), repeated for about `seconds` after one warm-up product.
double gflops(int64_t m, int64_t k, int64_t n, const std::string& name, double seconds) {
  if (name == "int8" || name == "int8-libtorch") return int8_gflops(m, k, n, name == "int8-libtorch", seconds);
  if (name == "fp32-few-rows" || name == "fp32-onednn") return linear_gflops(m, k, n, name == "fp32-few-rows", seconds);
  const auto dtype = dtype_of(name);
  const auto a = torch::randn({m, k}).to(dtype), b = torch::randn({k, n}).to(dtype);
  auto out = torch::mm(a, b);
  return rate_of([&] { torch::mm_out(out, a, b); }, m, k, n, seconds);
}

}  // namespace

int main(int argc, char** argv) {
  int64_t tokens = 4096;
  double seconds = 3;
  std::string dims = "256,1024,8000", dtypes = "fp32,bf16";
  po::options_description options("bench-gemm");
  options.add_options()("help,h", "show this help")("tokens", po::value(&tokens), "rows of every product")(
      "dims", po::value(&dims), "comma-separated model sizes: products of every pair (k, n) are timed")(
      "seconds", po::value(&seconds), "time per product")("dtypes", po::value(&dtypes),
                                                          "fp32, bf16, int8 (csan's kernel), int8-libtorch, "
                                                          "fp32-onednn, fp32-few-rows (inference's float products)");
  try {
    po::variables_map vm;
    po::store(po::parse_command_line(argc, argv, options), vm);
    po::notify(vm);
    if (vm.count("help")) {
      std::cout << options;
      return 0;
    }
    const auto sizes = csan::bench::split_list(dims);
    std::printf("threads %d, %lld rows\n", torch::get_num_threads(), static_cast<long long>(tokens));
    for (const auto& name : csan::bench::split_list(dtypes)) {
      double best = 0;
      for (const auto& k : sizes)
        for (const auto& n : sizes) {
          if (k == n) continue;
          const double rate = gflops(tokens, std::stoll(k), std::stoll(n), name, seconds);
          best = std::max(best, rate);
          std::printf("%-5s %5lld x %5s x %5s %8.1f GFLOP/s\n", name.c_str(), static_cast<long long>(tokens), k.c_str(),
                      n.c_str(), rate);
        }
      std::printf("%-5s peak %8.1f GFLOP/s\n", name.c_str(), best);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench-gemm: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
