// bench-csan: training speed of CSAN against the Transformer. Target tokens/s of one
// training step's forward + backward (encoder-decoder, label-smoothed cross-entropy, no
// optimizer step) for each architecture on the SAME synthetic batches; architectures run
// interleaved batch by batch and each (arch, batch) keeps its best of --repeats, so load
// from other processes hits them alike.
//   bench-csan [--archs transformer_base,csan1d_base,csan2d_base] [--max-tokens 4096]
//              [--batches 4] [--repeats 3] [--vocab 32000] [--mean-length 27]
//   bench-csan --attention [--lengths 16,32,...]: csan_attention alone, dense vs banded
//              path by sentence length (forward + backward), to place banded_from_length.
#include <ATen/Parallel.h>
#include <boost/program_options.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <functional>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "toolkit/core/config.h"
#include "toolkit/core/error.h"
#include "toolkit/models/model_registry.h"
#include "toolkit/nn/csan_attention.h"
#include "toolkit/training/criterion.h"
#include "toolkit/training/tensor_batch.h"

namespace po = boost::program_options;

namespace {

// CPU time of the process, not wall time: on a machine shared with other jobs the wall
// clock measures the scheduler; with OMP_NUM_THREADS=1 CPU time is the work done.
double cpu_seconds() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

// Length-sorted sentence pairs packed into batches of at most max_tokens padded tokens,
// as the trainer's batching does; source lengths uniform in [0.3, 1.7] x mean.
std::vector<csan::training::TensorBatch> make_batches(int64_t count, int64_t max_tokens, int64_t vocab,
                                                      int64_t mean_length) {
  std::mt19937 rng(1);
  std::uniform_int_distribution<int64_t> length(std::max<int64_t>(2, mean_length * 3 / 10), mean_length * 17 / 10);
  std::uniform_int_distribution<int64_t> jitter(-3, 3);
  std::vector<csan::training::TensorBatch> batches;
  while (static_cast<int64_t>(batches.size()) < count) {
    std::vector<std::pair<int64_t, int64_t>> pairs;
    for (int i = 0; i < 4096; ++i) {
      const int64_t s = length(rng);
      pairs.push_back({s, std::max<int64_t>(2, s + jitter(rng))});
    }
    std::sort(pairs.begin(), pairs.end());
    // One batch from a random region of the sorted pool: mixed lengths across batches.
    const size_t start = std::uniform_int_distribution<size_t>(0, pairs.size() / 2)(rng);
    size_t end = start;
    int64_t max_src = 0, max_tgt = 0;
    while (end < pairs.size()) {
      const int64_t s = std::max(max_src, pairs[end].first), t = std::max(max_tgt, pairs[end].second);
      if (static_cast<int64_t>(end - start + 1) * std::max(s, t) > max_tokens) break;
      max_src = s, max_tgt = t, ++end;
    }
    const int64_t b = static_cast<int64_t>(end - start);
    csan::training::TensorBatch batch;
    batch.src_tokens = torch::ones({b, max_src}, torch::kLong);
    batch.prev_output_tokens = torch::ones({b, max_tgt}, torch::kLong);
    batch.target = torch::ones({b, max_tgt}, torch::kLong);
    batch.src_lengths = torch::empty({b}, torch::kLong);
    for (int64_t i = 0; i < b; ++i) {
      const auto [s, t] = pairs[start + i];
      batch.src_tokens[i].narrow(0, 0, s).random_(4, vocab);
      batch.target[i].narrow(0, 0, t).random_(4, vocab);
      batch.prev_output_tokens[i][0] = 2;
      batch.prev_output_tokens[i].narrow(0, 1, t - 1).copy_(batch.target[i].narrow(0, 0, t - 1));
      batch.src_lengths[i] = s;
      batch.ntokens += t;
    }
    batch.nsentences = b;
    batches.push_back(batch);
  }
  return batches;
}

int bench_models(const std::vector<std::string>& archs, int64_t batches_count, int64_t repeats, int64_t max_tokens,
                 int64_t vocab, int64_t mean_length) {
  csan::core::ConfigSchema schema;
  csan::models::declare_model_options(schema);
  csan::training::declare_criterion_options(schema);
  std::vector<std::shared_ptr<csan::models::EncoderDecoderModel>> models;
  std::unique_ptr<csan::training::Criterion> criterion;
  for (const auto& arch : archs) {
    csan::core::Config cfg(schema);
    cfg.set("model.arch", arch);
    cfg.set("model.share_all_embeddings", true);
    cfg.set("criterion.label_smoothing", 0.1);
    csan::models::apply_arch_preset(cfg);
    torch::manual_seed(1);
    models.push_back(csan::models::build_model(cfg, {vocab, vocab, 1, true}));
    models.back()->train();
    if (!criterion) criterion = csan::training::build_criterion(cfg, 1);
  }
  auto batches = make_batches(batches_count, max_tokens, vocab, mean_length);
  int64_t tokens = 0;
  for (const auto& b : batches) tokens += b.ntokens;
  std::vector<double> best_total(archs.size(), 0.0);
  for (size_t bi = 0; bi < batches.size(); ++bi) {
    std::vector<double> best(archs.size(), 1e30);
    for (int64_t r = 0; r <= repeats; ++r)  // r = 0 warms up
      for (size_t a = 0; a < archs.size(); ++a) {
        models[a]->zero_grad();
        const double start = cpu_seconds();
        criterion->compute(*models[a], batches[bi]).loss.backward();
        const double s = cpu_seconds() - start;
        if (r > 0) best[a] = std::min(best[a], s);
      }
    for (size_t a = 0; a < archs.size(); ++a) best_total[a] += best[a];
    std::fprintf(stderr, "batch %zu/%zu: %lld sentences x %lld source tokens\n", bi + 1, batches.size(),
                 static_cast<long long>(batches[bi].nsentences),
                 static_cast<long long>(batches[bi].src_tokens.size(1)));
  }
  std::printf("bench-csan: %lld batches (%lld target tokens, max-tokens %lld, mean source length %lld), "
              "vocab %lld, best of %lld CPU times, %d threads\n",
              static_cast<long long>(batches.size()), static_cast<long long>(tokens),
              static_cast<long long>(max_tokens), static_cast<long long>(mean_length), static_cast<long long>(vocab),
              static_cast<long long>(repeats), at::get_num_threads());
  for (size_t a = 0; a < archs.size(); ++a)
    std::printf("  %-20s %9.1f tokens per CPU s  %.3fx %s\n", archs[a].c_str(), tokens / best_total[a],
                best_total[0] / best_total[a], archs[0].c_str());
  return 0;
}

// csan_attention alone: [B, 8, T, 64] with B*T ~ max_tokens, forward + backward, against
// the module's full-scope path (QK^T, padding mask, softmax, x V) on the same inputs.
int bench_attention(const std::vector<int64_t>& lengths, int64_t repeats, int64_t max_tokens) {
  std::printf("bench-csan --attention: CPU ms per forward+backward, 8 heads x 64, %lld tokens, window 11, "
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
  std::string archs = "transformer_base,csan1d_base,csan2d_base", lengths = "16,32,64,96,128,192,256,512";
  int64_t batches = 4, repeats = 3, max_tokens = 4096, vocab = 32000, mean_length = 27;
  po::options_description options("bench-csan [options]");
  options.add_options()("help,h", "show this help")(
      "archs", po::value<std::string>(&archs)->default_value(archs), "comma-separated architectures")(
      "batches", po::value<int64_t>(&batches)->default_value(batches), "batches")(
      "repeats", po::value<int64_t>(&repeats)->default_value(repeats), "timed runs per batch (best kept)")(
      "max-tokens", po::value<int64_t>(&max_tokens)->default_value(max_tokens), "padded tokens per batch")(
      "vocab", po::value<int64_t>(&vocab)->default_value(vocab), "joined vocabulary size")(
      "mean-length", po::value<int64_t>(&mean_length)->default_value(mean_length), "mean source length")(
      "attention", po::bool_switch(), "benchmark csan_attention's dense and banded paths instead")(
      "lengths", po::value<std::string>(&lengths)->default_value(lengths), "sentence lengths for --attention");
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
  if (vm["attention"].as<bool>()) {
    std::vector<int64_t> ts;
    for (const auto& s : split(lengths)) ts.push_back(std::stoll(s));
    return bench_attention(ts, repeats, max_tokens);
  }
  return bench_models(split(archs), batches, repeats, max_tokens, vocab, mean_length);
}

}  // namespace

int main(int argc, char** argv) { return csan::run_main("bench-csan", bench_main, argc, argv); }
