// The decoding-step attention kernel alone (nn/decoding_attention.h), on the shapes of
// beam search: R = sentences x beam query rows, one new position each, against
//  - self: the beam history's cached keys/values (position-major storage read through
//    rows_at, as IncrementalState keeps them; each row's ancestors drawn at random among
//    its sentence's beams), Tk = the step's position;
//  - encoder: one key row per sentence shared by its `beam` query rows, Tk = source length.
//   bench-decoding-attention [--sentences 64] [--beam 5] [--heads 4] [--head-dim 64]
//                            [--positions 4,12,24] [--dtypes fp32,bf16] [--seconds 1]
// Prints microseconds per call and GFLOP/s (2 x R x H x Tk x d for the scores and the same
// for the weighted sum) for every (kind, dtype, Tk). Compare two builds by running both.
#include <torch/torch.h>

#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "comma_list.h"
#include "repeat_timing.h"
#include "toolkit/nn/decoding_attention.h"

namespace po = boost::program_options;

namespace {

// Microseconds per call of `call`, repeated for about `seconds`.
template <typename Call>
double microseconds_per_call(Call call, double seconds) {
  const csan::bench::Repeats r = csan::bench::repeat_for(seconds, call);
  return r.seconds / r.calls * 1e6;
}

struct Shape {
  int64_t sentences, beam, heads, head_dim;
};

void report(const char* kind, const std::string& dtype, int64_t tk, const Shape& s, double us) {
  const double flops = 4.0 * s.sentences * s.beam * s.heads * tk * s.head_dim;
  std::printf("%-7s %-4s Tk %4ld  %9.1f us  %6.1f GFLOP/s\n", kind, dtype.c_str(), static_cast<long>(tk), us,
              flops / us / 1e3);
}

// Self-attention over the beam history: storage [Tk, R, H, d] viewed as [R, H, Tk, d].
double time_history(const Shape& s, int64_t tk, torch::ScalarType dtype, double seconds) {
  const int64_t rows = s.sentences * s.beam, width = s.heads * s.head_dim;
  auto storage = torch::randn({tk, rows, s.heads, s.head_dim}).to(dtype);
  auto k = storage.permute({1, 2, 0, 3});
  auto v = torch::randn({tk, rows, s.heads, s.head_dim}).to(dtype).permute({1, 2, 0, 3});
  // Row r's ancestor at each position: a beam of its own sentence.
  auto sentence_first = torch::arange(rows, torch::kLong).div(s.beam, "floor").mul(s.beam).unsqueeze(1);
  auto rows_at = sentence_first + torch::randint(s.beam, {rows, tk}, torch::kLong);
  rows_at.select(1, tk - 1).copy_(torch::arange(rows, torch::kLong));  // the new position is the row's own
  auto q = torch::randn({rows, width});
  return microseconds_per_call([&] { csan::nn::decoding_attention(q, k, v, {}, s.heads, 0.125, rows_at); }, seconds);
}

// Attention over the encoder output: [N, H, S, d], beam query rows per key row.
double time_encoder(const Shape& s, int64_t tk, torch::ScalarType dtype, double seconds) {
  auto k = torch::randn({s.sentences, s.heads, tk, s.head_dim}).to(dtype);
  auto v = torch::randn({s.sentences, s.heads, tk, s.head_dim}).to(dtype);
  auto padding = torch::zeros({s.sentences, tk}, torch::kBool);
  padding.narrow(0, 0, s.sentences / 2).narrow(1, tk - tk / 4, tk / 4).fill_(true);  // half the sentences shorter
  auto q = torch::randn({s.sentences * s.beam, s.heads * s.head_dim});
  return microseconds_per_call([&] { csan::nn::decoding_attention(q, k, v, padding, s.heads, 0.125); }, seconds);
}

}  // namespace

int main(int argc, char** argv) {
  Shape shape{};
  std::string positions, dtypes;
  double seconds = 1;
  po::options_description options("bench-decoding-attention options");
  options.add_options()("help", "this text")(
      "sentences", po::value(&shape.sentences)->default_value(64), "sentences in the batch")(
      "beam", po::value(&shape.beam)->default_value(5), "hypotheses per sentence")(
      "heads", po::value(&shape.heads)->default_value(4), "attention heads")(
      "head-dim", po::value(&shape.head_dim)->default_value(64), "width of a head")(
      "positions", po::value(&positions)->default_value("4,12,24"), "key positions (the step, the source length)")(
      "dtypes", po::value(&dtypes)->default_value("fp32,bf16"), "cache types: fp32, bf16")(
      "seconds", po::value(&seconds)->default_value(1.0), "time per figure");
  try {
    po::variables_map vm;
    po::store(po::parse_command_line(argc, argv, options), vm);
    if (vm.count("help")) {
      std::cout << options << "\n";
      return 0;
    }
    po::notify(vm);
    if (shape.sentences < 1 || shape.beam < 1 || shape.heads < 1 || shape.head_dim < 1)
      throw std::runtime_error("--sentences, --beam, --heads and --head-dim must be positive");
    torch::NoGradGuard no_grad;
    std::printf("bench-decoding-attention: %ld sentences x beam %ld, %ld heads of %ld, %d threads\n",
                static_cast<long>(shape.sentences), static_cast<long>(shape.beam), static_cast<long>(shape.heads),
                static_cast<long>(shape.head_dim), at::get_num_threads());
    for (const std::string& dtype : csan::bench::split_list(dtypes)) {
      if (dtype != "fp32" && dtype != "bf16") throw std::runtime_error("--dtypes: unknown '" + dtype + "' (fp32, bf16)");
      const auto type = dtype == "fp32" ? torch::kFloat : torch::kBFloat16;
      for (const std::string& item : csan::bench::split_list(positions)) {
        const int64_t tk = std::stoll(item);
        if (tk < 1) throw std::runtime_error("--positions: each at least 1");
        report("self", dtype, tk, shape, time_history(shape, tk, type, seconds));
        report("encoder", dtype, tk, shape, time_encoder(shape, tk, type, seconds));
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench-decoding-attention: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
