// bench-csan: CSAN's attention alone (csan_attention, forward + backward) by sentence
// length: the module's full-scope path, then 1-D and 2-D CSAN on the dense and the banded
// path, on the same inputs. It places banded_from_length (the dense/banded crossover) and
// shows what the window costs in isolation. Whole-model speed of CSAN against the
// Transformer is bench-train --arch transformer_base,csan1d_base,csan2d_base.
//   OMP_NUM_THREADS=1 bench-csan [--lengths 16,32,64,96,128,192,256] [--repeats 2] [--max-tokens 4096]
#include <ATen/Parallel.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "comma_list.h"
#include "toolkit/core/error.h"
#include "toolkit/nn/csan_attention.h"

namespace po = boost::program_options;

namespace {

// CPU time of the process, not wall time: on a machine shared with other jobs the wall
// clock measures the scheduler; with OMP_NUM_THREADS=1 CPU time is the work done.
double cpu_seconds() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

// csan_attention alone: [B, 8, T, 64] with B*T ~ max_tokens, forward + backward, against
// the module's full-scope path (QK^T, padding mask, softmax, x V) on the same inputs.
int bench_attention(const std::vector<int64_t>& lengths, int64_t repeats, int64_t max_tokens) {
  std::printf(
      "bench-csan: CPU ms per forward+backward, 8 heads x 64, %lld tokens, window 11, "
      "%d threads, best of %lld\n",
      static_cast<long long>(max_tokens), at::get_num_threads(), static_cast<long long>(repeats));
  std::printf("  %6s %10s %10s %10s %10s %10s\n", "length", "full", "1d dense", "1d banded", "2d dense", "2d banded");
  auto masks = csan::nn::CsanMaskCache::shared();
  for (int64_t t : lengths) {
    const int64_t b = std::max<int64_t>(1, max_tokens / t);
    auto q = torch::randn({b, 8, t, 64}).requires_grad_(), k = torch::randn({b, 8, t, 64}).requires_grad_(),
         v = torch::randn({b, 8, t, 64}).requires_grad_();
    auto padding = torch::zeros({b, t}, torch::kBool);
    padding[0][t - 1] = true;  // some padding, as in real batches
    auto time = [&](const std::function<torch::Tensor()>& f) {
      double best = 1e30;
      for (int64_t r = 0; r <= repeats; ++r) {  // r = 0 warms up
        const double start = cpu_seconds();
        f().sum().backward();
        if (r > 0) best = std::min(best, cpu_seconds() - start);
      }
      return best * 1e3;
    };
    std::printf("  %6lld %10.2f", static_cast<long long>(t), time([&] {
                  auto scores = torch::matmul(q, k.transpose(-2, -1));
                  scores.masked_fill_(padding.view({b, 1, 1, t}), -INFINITY);
                  return torch::matmul(torch::softmax(scores, -1), v);
                }));
    for (int64_t heads : {1, 3})
      for (auto path : {csan::nn::CsanPath::Dense, csan::nn::CsanPath::Banded}) {
        csan::nn::CsanCall call;
        call.key_padding_mask = padding;
        call.path = path;
        call.masks = masks.get();  // as in a model: built by the first windowed layer
        std::printf(" %10.2f", time([&] {
                      return csan::nn::csan_attention(q, k, v, {11, heads, csan::nn::HeadBoundary::Truncate}, call);
                    }));
      }
    std::printf("\n");
  }
  return 0;
}

int bench_main(int argc, char** argv) {
  std::string lengths = "16,32,64,96,128,192,256";
  int64_t repeats = 2, max_tokens = 4096;
  po::options_description options("bench-csan [options]");
  options.add_options()("help,h", "show this help")("repeats", po::value<int64_t>(&repeats)->default_value(repeats),
                                                    "timed runs per cell (best kept)")(
      "max-tokens", po::value<int64_t>(&max_tokens)->default_value(max_tokens), "padded tokens per batch")(
      "lengths", po::value<std::string>(&lengths)->default_value(lengths), "sentence lengths");
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, options), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw csan::Error(std::string(e.what()) + " (see bench-csan --help)");
  }
  if (vm.count("help")) {
    std::cout << options;
    return 0;
  }
  std::vector<int64_t> ts;
  for (const auto& s : csan::bench::split_list(lengths)) ts.push_back(std::stoll(s));
  return bench_attention(ts, repeats, max_tokens);
}

}  // namespace

int main(int argc, char** argv) { return csan::run_main("bench-csan", bench_main, argc, argv); }
