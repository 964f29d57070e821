// bench-train: training throughput in target tokens per second (fairseq's wps:
// non-padding target tokens incl. </s> per wall second), measured after warm-up.
//   bench-train --data DATA_BIN --recipe recipes/tiny-transformer.yaml [--set k=v ...]
//               [--warmup 5] [--updates 20]
// Configuration (a) of the issue: --set model.arch=transformer --set model.embed_dim=256
// ... (see the report); (b): --recipe recipes/transformer-base.yaml. Set OMP_NUM_THREADS.
#include <boost/program_options.hpp>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "toolkit/core/config.h"
#include "toolkit/core/error.h"
#include "toolkit/data/epoch_iterator.h"
#include "toolkit/data/language_pair_dataset.h"
#include "toolkit/models/model_registry.h"
#include "toolkit/nn/parameter_count.h"
#include "toolkit/text/dictionary.h"
#include "toolkit/training/optimizer.h"
#include "toolkit/training/trainer.h"
#include "toolkit/training/training_options.h"

namespace po = boost::program_options;
using namespace csan;

namespace {

int bench_main(int argc, char** argv) {
  std::string data, recipe, src = "src", tgt = "tgt";
  std::vector<std::string> sets;
  int warmup = 5, updates = 20;
  po::options_description options("bench-train");
  options.add_options()("data", po::value(&data)->required(), "csan-preprocess output directory")(
      "recipe", po::value(&recipe)->required(), "recipe YAML")("set", po::value(&sets)->composing(), "key=value")(
      "source-lang", po::value(&src), "source suffix")("target-lang", po::value(&tgt), "target suffix")(
      "warmup", po::value(&warmup), "untimed updates first")("updates", po::value(&updates), "timed updates");
  po::variables_map vm;
  po::store(po::parse_command_line(argc, argv, options), vm);
  po::notify(vm);

  core::Config cfg(training::train_schema());
  cfg.load_file(recipe);
  for (const auto& s : sets) cfg.apply_override(s);
  models::apply_arch_preset(cfg);
  const auto src_dict = text::Dictionary::load(data + "/dict." + src + ".txt");
  const auto tgt_dict = text::Dictionary::load(data + "/dict." + tgt + ".txt");
  data::LanguagePairDataset train(data, "train", src, tgt, tgt_dict.pad(), tgt_dict.eos());

  torch::manual_seed(1);
  models::ModelContext ctx{src_dict.size(), tgt_dict.size(), tgt_dict.pad(), src_dict == tgt_dict};
  training::TrainerParts parts;
  parts.model = models::build_model(cfg, ctx);
  parts.optimizer = training::build_optimizer(training::unique_parameters(*parts.model), cfg);
  parts.lr_scheduler = training::build_lr_scheduler(cfg);
  parts.criterion = training::build_criterion(cfg, tgt_dict.pad());
  parts.precision = std::make_unique<training::Fp32Precision>();
  parts.sync = std::make_unique<training::LocalGradientSync>();
  parts.clip_norm = cfg.get<double>("optimization.clip_norm");
  training::Trainer trainer(std::move(parts));
  std::printf("model %s: %lld parameters, vocab %d/%d, max_tokens %lld, threads %d\n",
              cfg.get<std::string>("model.arch").c_str(),
              static_cast<long long>(nn::count_parameters(trainer.model())), src_dict.size(), tgt_dict.size(),
              static_cast<long long>(cfg.get<int64_t>("dataset.max_tokens")), torch::get_num_threads());

  data::EpochIterator epochs(train.src_sizes(), train.tgt_sizes(),
                             {cfg.get<int64_t>("dataset.max_tokens"), cfg.get<int64_t>("dataset.max_sentences"), 1},
                             1);
  auto next_batch = [&] {
    if (epochs.end_of_epoch()) epochs.start_next_epoch();
    return training::to_tensors(train.collate(epochs.next()));
  };
  for (int i = 0; i < warmup; ++i) trainer.train_step({next_batch()});
  int64_t tokens = 0, padded = 0;
  double seconds = 0;
  for (int i = 0; i < updates; ++i) {
    const auto start = std::chrono::steady_clock::now();  // collation included, as in a real run
    auto batch = next_batch();
    auto r = trainer.train_step({batch});
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    tokens += r.stats.ntokens;
    padded += batch.target.numel();
  }
  std::printf("%d updates, %lld target tokens (%.1f%% padding), %.2f s: %.0f target tokens/s\n", updates,
              static_cast<long long>(tokens), 100.0 * (padded - tokens) / std::max<int64_t>(1, padded), seconds,
              tokens / seconds);
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return run_main("bench-train", bench_main, argc, argv); }
