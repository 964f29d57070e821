// csan-train RECIPE [--set key=value ...] --data DIR --save-dir DIR [...]: parses the
// options into the resolved recipe and calls the training library.
#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "toolkit/core/allocator_tuning.h"
#include "toolkit/core/config.h"
#include "toolkit/core/error.h"
#include "toolkit/tasks/recipe.h"
#include "toolkit/training/distributed_launcher.h"
#include "toolkit/training/train_loop.h"
#include "toolkit/training/train_start.h"

namespace po = boost::program_options;

namespace {

// Real flags for the options everybody uses; each maps onto one recipe key.
struct Flag {
  const char* name;
  const char* key;
  const char* help;
};
const Flag kStringFlags[] = {
    {"data", "task.data", "directory written by csan-preprocess"},
    {"save-dir", "checkpoint.save_dir", "where checkpoints, metrics.jsonl go"},
    {"restore-file", "checkpoint.restore_file", "checkpoint to resume from (default: SAVE_DIR/checkpoint_last.pt)"},
    {"source-lang", "task.source_lang", "source language suffix"},
    {"target-lang", "task.target_lang", "target language suffix"},
    {"arch", "model.arch", "architecture or preset (transformer_tiny, transformer_base, ...)"},
    {"distributed-init-method", "distributed_training.distributed_init_method", "tcp://HOST:PORT of rank 0, or env://"},
    {"distributed-backend", "distributed_training.distributed_backend", "gloo (CPU), nccl (CUDA) or auto"},
    {"precision", "common.precision", "fp32 (default), bf16 (autocast), fp16 or amp (CUDA, loss scaling)"},
    {"tensorboard-logdir", "common.tensorboard_logdir", "also write TensorBoard scalars here (one run per split)"},
};
const Flag kIntFlags[] = {
    {"max-update", "optimization.max_update", "stop after N updates"},
    {"max-epoch", "optimization.max_epoch", "stop after epoch N"},
    {"seed", "common.seed", "random seed"},
    {"max-tokens", "dataset.max_tokens", "max padded tokens per batch"},
    {"max-sentences", "dataset.max_sentences", "max sentences per batch"},
    {"update-freq", "optimization.update_freq", "micro-batches per update"},
    {"patience", "optimization.patience", "early stopping after N validations without improvement"},
    {"save-interval-updates", "checkpoint.save_interval_updates", "checkpoint every N updates"},
    {"validate-interval-updates", "dataset.validate_interval_updates", "validate every N updates"},
    {"log-interval", "common.log_interval", "updates between log lines"},
    {"threads", "common.threads", "CPU threads per worker (0: OMP_NUM_THREADS, else every usable CPU)"},
    {"distributed-world-size", "distributed_training.distributed_world_size",
     "workers in all; alone (no rank, RANK or Slurm task) it launches N local workers"},
    {"distributed-rank", "distributed_training.distributed_rank",
     "this worker's rank (with --distributed-init-method)"},
    {"distributed-port", "distributed_training.distributed_port", "rendezvous port (Slurm; local launch)"},
    {"device-id", "distributed_training.device_id", "local rank / CUDA device of this worker"},
    {"fp16-scale-window", "common.fp16_scale_window", "clean updates before the loss scale doubles"},
};
const Flag kDoubleFlags[] = {
    {"lr", "optimization.lr", "peak learning rate"},
    {"clip-norm", "optimization.clip_norm", "gradient clipping norm"},
    {"distributed-timeout", "distributed_training.distributed_timeout",
     "seconds before a missing or hung worker is an error (default 300)"},
    {"bucket-cap-mb", "distributed_training.bucket_cap_mb", "gradient all-reduce bucket size in MB (default 25)"},
    {"fp16-init-scale", "common.fp16_init_scale", "initial loss scale (fp16, amp)"},
    {"fp16-scale-tolerance", "common.fp16_scale_tolerance", "overflow share tolerated before halving the scale"},
    {"min-loss-scale", "common.min_loss_scale", "stop when the loss scale falls to this"},
    {"threshold-loss-scale", "common.threshold_loss_scale", "the loss scale never drops below this"},
};

int train_main(int argc, char** argv) {
  csan::core::keep_large_allocations_mapped();  // training steps reuse their buffers instead of page-faulting
  po::options_description visible("csan-train RECIPE [options]");
  visible.add_options()("help,h", "show this help")("set", po::value<std::vector<std::string>>()->composing(),
                                                    "override a recipe key: --set optimization.lr=1e-3")(
      "eval-bleu", po::bool_switch(), "validate with BLEU too (task.eval_bleu)")(
      "cpu", po::bool_switch(), "train on the CPU even when a CUDA GPU is available (common.cpu)")(
      "print-recipe", po::bool_switch(), "print the resolved recipe (YAML) and exit");
  for (const auto& f : kStringFlags) visible.add_options()(f.name, po::value<std::string>(), f.help);
  for (const auto& f : kIntFlags) visible.add_options()(f.name, po::value<int64_t>(), f.help);
  for (const auto& f : kDoubleFlags) visible.add_options()(f.name, po::value<double>(), f.help);
  po::options_description hidden;
  hidden.add_options()("recipe", po::value<std::string>());
  po::options_description all;
  all.add(visible).add(hidden);
  po::positional_options_description positional;
  positional.add("recipe", 1);

  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(all).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw csan::Error(std::string(e.what()) + " (see csan-train --help)");
  }
  if (vm.count("help")) {
    std::cout << visible << "\nRecipe keys are listed with --print-recipe; any of them can be set with --set.\n";
    return 0;
  }
  if (!vm.count("recipe")) throw csan::Error("missing RECIPE (a YAML file, e.g. recipes/tiny-transformer.yaml)");

  csan::core::Config cfg(csan::tasks::recipe_schema());
  cfg.load_file(vm["recipe"].as<std::string>());
  if (vm.count("set"))
    for (const auto& assignment : vm["set"].as<std::vector<std::string>>()) cfg.apply_override(assignment);
  for (const auto& f : kStringFlags)
    if (vm.count(f.name)) cfg.set(f.key, vm[f.name].as<std::string>());
  for (const auto& f : kIntFlags)
    if (vm.count(f.name)) cfg.set(f.key, vm[f.name].as<int64_t>());
  for (const auto& f : kDoubleFlags)
    if (vm.count(f.name)) cfg.set(f.key, vm[f.name].as<double>());
  if (vm["eval-bleu"].as<bool>()) cfg.set("task.eval_bleu", true);
  if (vm["cpu"].as<bool>()) cfg.set("common.cpu", true);
  csan::tasks::resolve_recipe(cfg);

  if (vm["print-recipe"].as<bool>()) {
    std::cout << cfg.to_yaml();
    return 0;
  }
  if (!cfg.has("task.data")) throw csan::Error("missing --data DIR (the output directory of csan-preprocess)");
  const auto distributed = csan::training::resolve_distributed_setup(cfg);
  if (distributed.launch_local_workers) {
    // Checked here once: every worker would print the same error.
    csan::training::check_training_start(cfg, *csan::tasks::open_task(cfg));
    return csan::training::launch_local_workers(distributed, argv);
  }
  const auto task = csan::tasks::open_task(cfg);
  std::string command_line;
  for (int i = 0; i < argc; ++i) command_line += (i ? " " : "") + std::string(argv[i]);
  return csan::training::run_training(cfg, *task, command_line);
}

}  // namespace

int main(int argc, char** argv) { return csan::run_main("csan-train", train_main, argc, argv); }
