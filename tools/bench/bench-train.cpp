// bench-train: training throughput in target tokens per second (fairseq's wps:
// non-padding target tokens incl. </s> per wall second), measured after warm-up.
//   bench-train --data DATA_BIN --recipe RECIPE [--set k=v ...] [--arch a,b,c]
//               [--warmup 5] [--updates 20] [--profile trace.json]   (tools/bench/trace-summary reads it)
// Every architecture of --arch is built from the same recipe and overrides (only
// model.arch differs) and trained on the SAME batches; the architectures take turns
// update by update, so load from other processes hits them alike, and each is reported
// with its ratio to the first. Without --arch, the recipe's arch alone.
// The timed batches are spread evenly over an epoch's length order (see sample_batches),
// so the figure stands for a whole epoch; their padding is printed beside the epoch's.
//
// The configurations, with OMP_NUM_THREADS=2:
//   csan-preprocess -s en -t de --trainpref $D/train --validpref $D/val --joined-dictionary
//       --spm-vocab-size 8000 --destdir /tmp/m30k        (D=/work/shared/data/multi30k)
//   (a) bench-train --data /tmp/m30k --source-lang en --target-lang de --recipe recipes/bench-small.yaml
//   (b) bench-train --data /tmp/m30k --source-lang en --target-lang de --recipe recipes/transformer-base.yaml
//   issue 6: ... --recipe recipes/transformer-base.yaml --arch transformer_base,csan1d_base,csan2d_base
//   issue 16: ... --recipe recipes/transformer-base.yaml --arch transformer_base,transformer_base_prenorm,ccn_base
//            (CCN's time per update against its Transformers'; the paper: epochs +60-80%)
//   issue 17: tools/bench/locality-speed.sh /tmp/m30k   (... --arch transformer_base,locality_<method>_base,...,
//            csan2d_base; prints each ratio next to CSAN Table 1's Speed column)
//   issue 7: ... --recipe recipes/bench-small.yaml --workers 2   (1 vs 2 Gloo workers, 1 thread each)
//   issue 7: ... --recipe recipes/bench-small.yaml --precision fp32,bf16   (each arch under each
//            precision on the same batches; also bf16-weights: bf16 model + fp32 master weights)
//   side by side with a plain PyTorch eager loop of the same model on the same batches
//   (--dump-batches + pytorch-reference-train.py): tools/bench/train-vs-pytorch.sh small|base DATA
//   Each variant's linear products per update and their rate (GFLOP/s) follow the table:
//   against bench-gemm's peak for the precision, the fraction of the peak a step reaches.
//   --glibc-malloc: glibc's default allocator settings, against which the default
//            (core/allocator_tuning: large blocks stay mapped) is compared.
// OpenMP waits: libgomp spins up to ~300k iterations at every barrier. On a machine that
// other jobs share, a spinning thread waits for a descheduled partner: there
// OMP_WAIT_POLICY=passive is much faster than the default, while on a quiet machine the
// default spin wins (docs/csan-train.md has the figures): keep the default for measurements
// and dedicated runs; passive only where cores are shared.
#include <torch/csrc/autograd/profiler_legacy.h>
#include <unistd.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "comma_list.h"
#include "toolkit/core/allocator_tuning.h"
#include "toolkit/core/atomic_file.h"
#include "toolkit/core/config.h"
#include "toolkit/core/error.h"
#include "toolkit/data/epoch_iterator.h"
#include "toolkit/nn/compute_threads.h"
#include "toolkit/nn/linear.h"
#include "toolkit/nn/parameter_count.h"
#include "toolkit/tasks/recipe.h"
#include "toolkit/training/c10d_gradient_sync.h"
#include "toolkit/training/distributed_launcher.h"
#include "toolkit/training/optimizer.h"
#include "toolkit/training/precision_master_weights.h"
#include "toolkit/training/trainer.h"
#include "toolkit/training/trainer_parts.h"

namespace fs = std::filesystem;
namespace po = boost::program_options;
using namespace csan;

namespace {

struct BenchOptions {
  std::string data, recipe, src = "src", tgt = "tgt", archs, profile, dump_batches;
  std::vector<std::string> sets;
  int warmup = 5, updates = 20;
  int workers = 0;         // --workers N: tokens/s of 1 vs N worker processes
  std::string precisions;  // --precision fp32,bf16
  bool glibc_malloc = false;
};

// One trained configuration of the comparison and what it measured.
struct Variant {
  std::string label;
  std::unique_ptr<core::Config> cfg;
  std::unique_ptr<training::Trainer> trainer;
  int64_t tokens = 0;
  double seconds = 0;
  double loss_bits_sum = 0;          // over the timed updates (the same batches for every variant)
  double forward_product_flops = 0;  // of the timed updates' linear products (nn::LinearFlopCounter)
};

std::unique_ptr<core::Config> load_config(const BenchOptions& o, const std::string& arch) {
  auto cfg = std::make_unique<core::Config>(tasks::recipe_schema());
  cfg->load_file(o.recipe);
  for (const auto& s : o.sets) cfg->apply_override(s);
  if (!arch.empty()) cfg->apply_override("model.arch=" + arch);
  cfg->set("task.data", o.data);
  cfg->set("task.source_lang", o.src);
  cfg->set("task.target_lang", o.tgt);
  tasks::resolve_recipe(*cfg);
  return cfg;
}

std::unique_ptr<training::Trainer> build_trainer(const core::Config& cfg, const training::Task& task,
                                                 std::unique_ptr<training::GradientSync> sync = nullptr,
                                                 const std::string& precision = "fp32") {
  torch::manual_seed(1);  // the same initial weights and dropout stream for every variant
  // bf16-weights: the alternative to bf16 autocast, measured against it (issue 7).
  auto policy = precision == "bf16-weights"
                    ? std::make_unique<training::MasterWeightsPrecision>(precision, torch::kBFloat16, std::nullopt)
                    : training::make_precision_policy(precision);
  return std::make_unique<training::Trainer>(training::assemble_trainer_parts(
      cfg, task, std::move(policy), [&](const torch::Device&) -> std::unique_ptr<training::GradientSync> {
        if (sync) return std::move(sync);
        return std::make_unique<training::LocalGradientSync>();
      }));
}

// --workers N: the same training steps (recipe, data, batches of max_tokens each) run as
// 1 worker process and then as N worker processes over Gloo, every worker with 1 thread,
// each started by the library's local launcher exactly as csan-train does. Worker rank r
// takes global batch k * N + r at update k; tokens/s counts all workers' target tokens.
int run_as_worker(const BenchOptions& o) {
  torch::set_num_threads(1);
  const auto cfg = load_config(o, "");
  const auto setup = training::resolve_distributed_setup(*cfg);
  const auto task = tasks::open_task(*cfg);
  const auto& train = task->train_data();
  auto trainer = build_trainer(
      *cfg, *task, setup.distributed() ? std::make_unique<training::C10dGradientSync>(setup, torch::kCPU) : nullptr);
  data::EpochIterator epochs(train.source_sizes(), train.target_sizes(),
                             {cfg->get<int64_t>("dataset.max_tokens"), cfg->get<int64_t>("dataset.max_sentences"), 1},
                             cfg->get<int64_t>("common.seed"), true, setup.rank, setup.world_size);
  int64_t tokens = 0;
  std::chrono::steady_clock::time_point start;
  for (int i = 0; i < o.warmup + o.updates; ++i) {
    if (i == o.warmup) start = std::chrono::steady_clock::now();
    if (epochs.end_of_epoch()) epochs.start_next_epoch();
    const auto r = trainer->train_step({train.collate(epochs.next())});
    if (i >= o.warmup) tokens += r.stats.ntokens;  // summed over workers
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (setup.rank == 0) std::ofstream(std::getenv("CSAN_BENCH_RESULT")) << tokens << " " << seconds << "\n";
  return 0;
}

// The batches of a bench run. The timed ones are spread evenly over one epoch's length
// order (systematic sampling), so that 20 of them carry about the epoch's padding and
// length mix: the first few batches of a shuffled epoch can be far off (twice the
// epoch's target padding). They run in shuffled order, as in
// training. Warm-up and profiled batches sit halfway between the timed ones.
struct BenchBatches {
  std::vector<data::Batch> warmup, timed, profiled;
  double epoch_target_padding = 0, epoch_source_padding = 0;
};

double padding_fraction(const std::vector<data::Batch>& batches, const std::vector<int32_t>& sizes) {
  int64_t real = 0, padded = 0;
  for (const auto& batch : batches) {
    int64_t longest = 0;
    for (int64_t i : batch) {
      real += sizes[i];
      longest = std::max<int64_t>(longest, sizes[i]);
    }
    padded += longest * static_cast<int64_t>(batch.size());
  }
  return padded ? 1.0 - static_cast<double>(real) / padded : 0.0;
}

BenchBatches sample_batches(const training::TaskDataset& train, const core::Config& cfg, int warmup, int updates) {
  const auto seed = static_cast<uint64_t>(cfg.get<int64_t>("common.seed"));
  const data::BatchingOptions options{cfg.get<int64_t>("dataset.max_tokens"), cfg.get<int64_t>("dataset.max_sentences"),
                                      1};
  const auto epoch = data::batch_by_size(data::ordered_indices(train.source_sizes(), train.target_sizes(), seed),
                                         train.source_sizes(), train.target_sizes(), options);
  BenchBatches out;
  out.epoch_target_padding = padding_fraction(epoch, train.target_sizes());
  out.epoch_source_padding = padding_fraction(epoch, train.source_sizes());
  // Batch k of n spread evenly over the epoch, at `phase` (0..1) of its stride.
  auto spread = [&](int n, double phase) {
    std::vector<data::Batch> picked;
    for (int k = 0; k < n; ++k)
      picked.push_back(epoch[static_cast<size_t>((k + phase) * epoch.size() / n) % epoch.size()]);
    data::deterministic_shuffle(picked, seed + n);
    return picked;
  };
  out.timed = spread(updates, 0.25);
  out.warmup = spread(warmup, 0.75);
  out.profiled = spread(1, 0.5);
  return out;
}

// "warmup|timed i j k ..." per batch, in the order they run: the same batches for a
// reference implementation in another language.
void write_batches(const std::string& path, const BenchBatches& batches) {
  std::ostringstream text;
  for (const auto& [kind, list] : {std::pair{"warmup", &batches.warmup}, std::pair{"timed", &batches.timed}})
    for (const auto& batch : *list) {
      text << kind;
      for (int64_t i : batch) text << ' ' << i;
      text << '\n';
    }
  write_file_atomically(path, text.str());
}

int compare_worker_counts(const BenchOptions& o, char** argv) {
  const std::string result = fs::temp_directory_path() / ("bench-train-workers-" + std::to_string(getpid()));
  setenv("CSAN_BENCH_RESULT", result.c_str(), 1);
  setenv("OMP_NUM_THREADS", "1", 1);
  std::printf("%s, %d warm-up + %d timed updates per worker, 1 thread per worker\n",
              load_config(o, "")->get<std::string>("model.arch").c_str(), o.warmup, o.updates);
  double first = 0;
  for (int workers : {1, o.workers}) {
    training::DistributedSetup setup;
    setup.world_size = workers;
    setup.timeout_seconds = 600;
    training::launch_local_workers(setup, argv);
    std::ifstream in(result);
    double tokens = 0, seconds = 0;
    if (!(in >> tokens >> seconds)) throw Error(result + ": no result from the workers");
    const double rate = tokens / seconds;
    if (workers == 1) first = rate;
    std::printf("%d worker(s) %8.2f s %8.0f target tokens/s  %.3fx\n", workers, seconds, rate, rate / first);
  }
  fs::remove(result);
  return 0;
}

int bench_main(int argc, char** argv) {
  BenchOptions o;
  po::options_description options("bench-train --data DATA_BIN --recipe RECIPE [options]");
  options.add_options()("help,h", "show this help")("data", po::value(&o.data)->required(),
                                                    "csan-preprocess output directory")(
      "recipe", po::value(&o.recipe)->required(), "recipe YAML")("set", po::value(&o.sets)->composing(), "key=value")(
      "arch", po::value(&o.archs), "comma-separated architectures to compare (default: the recipe's)")(
      "source-lang", po::value(&o.src), "source suffix")("target-lang", po::value(&o.tgt), "target suffix")(
      "warmup", po::value(&o.warmup), "untimed updates first")("updates", po::value(&o.updates), "timed updates")(
      "profile", po::value(&o.profile), "then profile one more update (first arch) into this Chrome trace")(
      "precision", po::value(&o.precisions), "comma-separated precisions to compare (fp32, bf16, bf16-weights)")(
      "glibc-malloc", po::bool_switch(&o.glibc_malloc), "leave glibc's allocator settings alone")(
      "dump-batches", po::value(&o.dump_batches),
      "also write the warm-up and timed batches' example indices to this file (for pytorch-reference-train.py)");
  options.add_options()("workers", po::value(&o.workers), "compare 1 and N CPU worker processes (Gloo, 1 thread each)");
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, options), vm);
    if (vm.count("help")) {  // before notify: --data and --recipe are required
      std::cout << options;
      return 0;
    }
    po::notify(vm);
  } catch (const po::error& e) {
    throw Error(std::string(e.what()) + " (see bench-train --help)");
  }
  if (o.workers > 1) return std::getenv("RANK") ? run_as_worker(o) : compare_worker_counts(o, argv);
  if (!o.glibc_malloc) core::keep_large_allocations_mapped();
  nn::use_compute_threads(0);  // as csan-train: OMP_NUM_THREADS, else every usable CPU

  const auto task = tasks::open_task(*load_config(o, ""));
  const auto& train = task->train_data();

  std::vector<Variant> variants;
  auto archs = bench::split_list(o.archs);
  if (archs.empty()) archs.push_back("");
  auto precisions = bench::split_list(o.precisions);
  if (precisions.empty()) precisions.push_back("fp32");
  std::vector<std::pair<std::string, std::string>> runs;  // (arch, precision)
  for (const auto& arch : archs)
    for (const auto& precision : precisions) runs.emplace_back(arch, precision);
  for (const auto& precision : precisions) {
    // bf16-weights runs its products in bf16 too, so the same warning applies.
    const std::string warning =
        training::precision_speed_warning(precision == "bf16-weights" ? "bf16" : precision, torch::Device(torch::kCPU));
    if (!warning.empty()) std::printf("%s\n", warning.c_str());
  }
  for (const auto& [arch, precision] : runs) {
    Variant v;
    v.cfg = load_config(o, arch);
    v.label = v.cfg->get<std::string>("model.arch") + (precisions.size() > 1 ? " " + precision : "");
    v.trainer = build_trainer(*v.cfg, *task, nullptr, precision);
    std::printf("%-24s %lld parameters\n", v.label.c_str(),
                static_cast<long long>(nn::count_parameters(v.trainer->model())));
    variants.push_back(std::move(v));
  }
  const auto& cfg = *variants.front().cfg;
  const auto context = task->model_context();
  std::printf("vocab %lld/%lld, max_tokens %lld, threads %d\n", static_cast<long long>(context.vocab_size("source")),
              static_cast<long long>(context.vocab_size("target")),
              static_cast<long long>(cfg.get<int64_t>("dataset.max_tokens")), torch::get_num_threads());

  const auto batches = sample_batches(train, cfg, o.warmup, o.updates);
  if (!o.dump_batches.empty()) write_batches(o.dump_batches, batches);
  auto batch_number = [&](int i) -> const data::Batch& {
    return i < o.warmup ? batches.warmup[i] : batches.timed[i - o.warmup];
  };
  for (int i = 0; i < o.warmup + o.updates; ++i) {
    const bool timed = i >= o.warmup;
    auto collate_start = std::chrono::steady_clock::now();
    const auto batch = train.collate(batch_number(i));  // collation counts, as in a real run
    const double collate_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - collate_start).count();
    for (auto& v : variants) {
      const auto start = std::chrono::steady_clock::now();
      nn::LinearFlopCounter products;
      const auto r = v.trainer->train_step({batch});
      if (!timed) continue;
      v.forward_product_flops += products.flops();
      v.seconds += collate_seconds + std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      v.tokens += r.stats.ntokens;
      v.loss_bits_sum += r.stats.loss_bits();
    }
  }

  if (!o.profile.empty()) {
    const auto batch = train.collate(batches.profiled.front());
    torch::autograd::profiler::RecordProfile recording(o.profile);
    variants.front().trainer->train_step({batch});
  }
  const int64_t real = variants.front().tokens;
  std::printf("%d updates, %lld target tokens, padding %.1f%% target %.1f%% source (epoch: %.1f%% %.1f%%)\n", o.updates,
              static_cast<long long>(real), 100 * padding_fraction(batches.timed, train.target_sizes()),
              100 * padding_fraction(batches.timed, train.source_sizes()), 100 * batches.epoch_target_padding,
              100 * batches.epoch_source_padding);
  const double first = variants.front().tokens / variants.front().seconds;
  for (const auto& v : variants) {
    const double rate = v.tokens / v.seconds;
    std::printf("%-40s %8.2f s %8.0f target tokens/s  %.3fx  loss %.4f\n", v.label.c_str(), v.seconds, rate,
                rate / first, v.loss_bits_sum / std::max(1, o.updates));
  }
  // What fraction of the CPU's GEMM peak (bench-gemm) a step reaches: a training step
  // multiplies about 3x its forward's linear products (see nn::LinearFlopCounter).
  for (const auto& v : variants) {
    const double flops = 3 * v.forward_product_flops;
    std::printf("%-40s %8.1f GFLOP per update in linear products (3x the forward's), %.1f GFLOP/s\n", v.label.c_str(),
                flops / 1e9 / std::max(1, o.updates), flops / 1e9 / v.seconds);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return run_main("bench-train", bench_main, argc, argv); }
