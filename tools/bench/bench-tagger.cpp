// bench-tagger: CPU seconds per training epoch of the convoluted-attention tagger, the
// figure issue 15 asks for (goal: at most 13 CPU-s per UD_English-LinES epoch on one
// thread, half of what a PyTorch port of the authors' Keras code took).
//   csan-preprocess --task tagging --vocab-protocol convatt --destdir /tmp/lines
//       --trainpref $UD/UD_English-LinES/en_lines-ud-train --validpref ...-dev --testpref ...-test
//   bench-tagger --data /tmp/lines [--arch tagger_pe_add,tagger_conv2d] [--recipe R] [--set k=v]
//                [--epochs 1] [--threads 1] [--profile trace.json]
// Every arch is built from the same recipe (default recipes/tagger-pe-add.yaml: the
// paper's UD setting, 32 chunks of 60 words per batch, RMSprop) with the same seed and
// trained on the SAME batches of whole epochs; the archs take turns batch by batch, so
// load from other processes hits them alike. For each arch: CPU seconds (this process,
// all threads) and wall seconds per training epoch (every batch: forward, backward,
// optimizer step, as csan-train's Trainer runs them), the same for one pass over the
// validation split (accuracy's forward passes), and ratios to the first arch.
// --profile: then one more batch per arch into a Chrome trace (chrome://tracing).
#include <torch/csrc/autograd/profiler_legacy.h>
#include <unistd.h>

#include <boost/program_options.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <sstream>
#include <string>
#include <vector>

#include "comma_list.h"
#include "toolkit/core/config.h"
#include "toolkit/core/error.h"
#include "toolkit/data/batching.h"
#include "toolkit/nn/parameter_count.h"
#include "toolkit/tasks/recipe.h"
#include "toolkit/training/trainer.h"
#include "toolkit/training/trainer_parts.h"

namespace po = boost::program_options;
using namespace csan;

namespace {

double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

double wall_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Variant {
  std::string arch;
  std::unique_ptr<core::Config> cfg;
  std::unique_ptr<training::Task> task;
  std::unique_ptr<training::Trainer> trainer;
  std::unique_ptr<training::Validator> validator;
  double train_cpu = 0, train_wall = 0, valid_cpu = 0, valid_wall = 0, loss_bits = 0, accuracy = 0;
  int64_t words = 0;
};

int bench_main(int argc, char** argv) {
  std::string data, recipe = "recipes/tagger-pe-add.yaml";
  std::string archs = "tagger_pe_add,tagger_conv2d";
  std::vector<std::string> sets;
  std::string profile;
  int epochs = 1, threads = 1;
  po::options_description desc("bench-tagger --data TAGGING_DATA [options]");
  desc.add_options()("help,h", "show this help")("data", po::value(&data), "csan-preprocess --task tagging output")(
      "recipe", po::value(&recipe), "recipe (default: recipes/tagger-pe-add.yaml, from the source root)")(
      "set", po::value(&sets), "recipe override key=value (repeatable)")(
      "arch", po::value(&archs)->default_value(archs), "archs to compare, comma-separated (the first is the baseline)")(
      "epochs", po::value(&epochs)->default_value(1), "training epochs per arch")(
      "threads", po::value(&threads)->default_value(1), "intra-op threads")(
      "profile", po::value(&profile), "then profile one more batch of every arch into this Chrome trace");
  po::variables_map vm;
  po::store(po::parse_command_line(argc, argv, desc), vm);
  po::notify(vm);
  if (vm.count("help") || data.empty()) {
    std::printf("%s", (std::ostringstream() << desc).str().c_str());
    return data.empty() && !vm.count("help") ? 1 : 0;
  }
  if (epochs < 1 || threads < 1) throw Error("--epochs and --threads must be at least 1");
  torch::set_num_threads(threads);

  std::vector<Variant> variants;
  for (const auto& arch : bench::split_list(archs)) {
    Variant v;
    v.arch = arch;
    v.cfg = std::make_unique<core::Config>(tasks::recipe_schema());
    v.cfg->load_file(recipe);
    for (const auto& s : sets) v.cfg->apply_override(s);
    v.cfg->apply_override("model.arch=" + arch);
    v.cfg->set("task.data", data);
    tasks::resolve_recipe(*v.cfg);
    v.task = tasks::open_task(*v.cfg);
    torch::manual_seed(1);  // the same initial weights and dropout stream for every arch
    v.trainer = std::make_unique<training::Trainer>(training::assemble_trainer_parts(
        *v.cfg, *v.task, training::make_precision_policy("fp32"),
        [](const torch::Device&) { return std::make_unique<training::LocalGradientSync>(); }));
    v.validator = v.task->validator([](const std::string&) {});
    variants.push_back(std::move(v));
  }
  if (variants.empty()) throw Error("--arch: no arch given");
  const auto& cfg = *variants[0].cfg;
  const auto& train = variants[0].task->train_data();
  const data::BatchingOptions batching{cfg.get<int64_t>("dataset.max_tokens"),
                                       cfg.get<int64_t>("dataset.max_sentences"), 1};
  const auto seed = static_cast<uint64_t>(cfg.get<int64_t>("common.seed"));

  int64_t words = 0, batches_per_epoch = 0;
  for (int epoch = 1; epoch <= epochs; ++epoch) {
    auto batches = data::batch_by_size(data::ordered_indices(train.source_sizes(), train.target_sizes(), seed + epoch),
                                       train.source_sizes(), train.target_sizes(), batching);
    data::deterministic_shuffle(batches, seed + epoch);
    batches_per_epoch = static_cast<int64_t>(batches.size());
    for (const auto& batch : batches) {
      for (auto& v : variants) {
        const double cpu = cpu_seconds(), wall = wall_seconds();
        const auto result = v.trainer->train_step({v.task->train_data().collate(batch)});
        v.train_cpu += cpu_seconds() - cpu, v.train_wall += wall_seconds() - wall;
        v.loss_bits += result.stats.loss_sum / std::log(2.0);
        v.words += result.stats.ntokens;
        if (&v == &variants[0]) words += result.stats.ntokens;
      }
    }
  }
  for (auto& v : variants) {
    const auto* valid = v.task->valid_data();
    if (!valid || !v.validator) continue;
    const auto valid_batches =
        data::batch_by_size(data::ordered_indices(valid->source_sizes(), valid->target_sizes(), seed),
                            valid->source_sizes(), valid->target_sizes(), batching);
    v.trainer->model().eval();
    const double cpu = cpu_seconds(), wall = wall_seconds();
    v.accuracy = v.validator->values(v.validator->statistics(v.trainer->model(), valid_batches))[0].second;
    v.valid_cpu = cpu_seconds() - cpu, v.valid_wall = wall_seconds() - wall;
  }

  if (!profile.empty()) {
    const auto batch =
        train.collate(data::batch_by_size(data::ordered_indices(train.source_sizes(), train.target_sizes(), seed),
                                          train.source_sizes(), train.target_sizes(), batching)
                          .front());
    torch::autograd::profiler::RecordProfile recording(profile);
    for (auto& v : variants) {
      RECORD_FUNCTION("train_step " + v.arch, std::vector<c10::IValue>());
      v.trainer->model().train();
      v.trainer->train_step({batch});
    }
  }

  double load[3] = {0, 0, 0};
  if (getloadavg(load, 3) < 0) load[0] = -1;
  std::printf(
      "bench-tagger: %s, %lld batches of %lld chunks per epoch (%lld words), %d epoch(s), %d thread(s), "
      "load average %.2f\n",
      data.c_str(), static_cast<long long>(batches_per_epoch),
      static_cast<long long>(cfg.get<int64_t>("dataset.max_sentences")), static_cast<long long>(words / epochs), epochs,
      threads, load[0]);
  std::printf("%-16s %11s %12s %13s %12s %12s %13s %11s %8s\n", "arch", "parameters", "CPU-s/epoch", "wall-s/epoch",
              "ratio (CPU)", "valid CPU-s", "valid wall-s", "train loss", "dev acc");
  for (const auto& v : variants) {
    std::printf("%-16s %11lld %12.2f %13.2f %12.2f %12.2f %13.2f %11.3f %8.2f\n", v.arch.c_str(),
                static_cast<long long>(nn::count_parameters(v.trainer->model())), v.train_cpu / epochs,
                v.train_wall / epochs, v.train_cpu / variants[0].train_cpu, v.valid_cpu, v.valid_wall,
                v.words ? v.loss_bits / double(v.words) : 0.0, v.accuracy);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return csan::run_main("bench-tagger", bench_main, argc, argv); }
