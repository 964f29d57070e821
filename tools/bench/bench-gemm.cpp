// The matrix-product peak of this CPU as LibTorch reaches it: a plain at::mm loop per
// dtype, on the shapes a training step multiplies (tokens x d by d x ffn, and the output
// projection), so that bench-train's achieved GFLOP/s can be read as a fraction of it.
//   bench-gemm [--tokens 4096] [--dims 256,1024,8000] [--seconds 3] [--dtypes fp32,bf16]
// Prints GFLOP/s for every (dtype, shape) and the best per dtype (the peak).
#include <torch/torch.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <chrono>
#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "comma_list.h"

namespace po = boost::program_options;

namespace {

torch::ScalarType dtype_of(const std::string& name) {
  if (name == "fp32") return torch::kFloat;
  if (name == "bf16") return torch::kBFloat16;
  throw std::runtime_error("--dtypes: unknown dtype '" + name + "' (fp32, bf16)");
}

// GFLOP/s of (m x k) @ (k x n), repeated for about `seconds` after one warm-up product.
double gflops(int64_t m, int64_t k, int64_t n, torch::ScalarType dtype, double seconds) {
  const auto a = torch::randn({m, k}).to(dtype), b = torch::randn({k, n}).to(dtype);
  auto out = torch::mm(a, b);
  int64_t products = 0;
  const auto start = std::chrono::steady_clock::now();
  double elapsed = 0;
  while (elapsed < seconds) {
    torch::mm_out(out, a, b);
    ++products;
    elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  return 2.0 * m * k * n * products / elapsed / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t tokens = 4096;
  double seconds = 3;
  std::string dims = "256,1024,8000", dtypes = "fp32,bf16";
  po::options_description options("bench-gemm");
  options.add_options()("help,h", "show this help")("tokens", po::value(&tokens), "rows of every product")(
      "dims", po::value(&dims), "comma-separated model sizes: products of every pair (k, n) are timed")(
      "seconds", po::value(&seconds), "time per product")("dtypes", po::value(&dtypes), "fp32, bf16");
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
      const auto dtype = dtype_of(name);
      double best = 0;
      for (const auto& k : sizes)
        for (const auto& n : sizes) {
          if (k == n) continue;
          const double rate = gflops(tokens, std::stoll(k), std::stoll(n), dtype, seconds);
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
