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
#include "toolkit/tasks/train_command.h"

namespace po = boost::program_options;

namespace {

int train_main(int argc, char** argv) {
  csan::core::keep_large_allocations_mapped();  // training steps reuse their buffers instead of page-faulting
  po::options_description visible("csan-train RECIPE [options]");
  visible.add_options()("help,h", "show this help")("set", po::value<std::vector<std::string>>()->composing(),
                                                    "override a recipe key: --set optimization.lr=1e-3")(
      "eval-bleu", po::bool_switch(), "validate with BLEU too (task.eval_bleu)")(
      "cpu", po::bool_switch(), "train on the CPU even when a CUDA GPU is available (common.cpu)")(
      "print-recipe", po::bool_switch(), "print the resolved recipe (YAML) and exit");
  for (const auto& f : csan::tasks::train_flags()) {
    if (f.type == csan::core::ValueType::Bool)
      visible.add_options()(f.name, po::bool_switch(), f.help);
    else if (f.type == csan::core::ValueType::Int)
      visible.add_options()(f.name, po::value<int64_t>(), f.help);
    else if (f.type == csan::core::ValueType::Double)
      visible.add_options()(f.name, po::value<double>(), f.help);
    else
      visible.add_options()(f.name, po::value<std::string>(), f.help);
  }
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

  std::vector<std::string> overrides;
  if (vm.count("set")) overrides = vm["set"].as<std::vector<std::string>>();
  std::vector<std::pair<std::string, csan::core::Value>> settings;
  for (const auto& f : csan::tasks::train_flags()) {
    if (!vm.count(f.name)) continue;
    if (f.type == csan::core::ValueType::Bool) {
      if (vm[f.name].as<bool>()) settings.emplace_back(f.key, true);
    } else if (f.type == csan::core::ValueType::Int)
      settings.emplace_back(f.key, vm[f.name].as<int64_t>());
    else if (f.type == csan::core::ValueType::Double)
      settings.emplace_back(f.key, vm[f.name].as<double>());
    else
      settings.emplace_back(f.key, vm[f.name].as<std::string>());
  }
  if (vm["eval-bleu"].as<bool>()) settings.emplace_back("task.eval_bleu", true);
  if (vm["cpu"].as<bool>()) settings.emplace_back("common.cpu", true);
  const csan::core::Config cfg = csan::tasks::training_recipe(vm["recipe"].as<std::string>(), overrides, settings);

  if (vm["print-recipe"].as<bool>()) {
    std::cout << cfg.to_yaml();
    return 0;
  }
  std::string command_line;
  for (int i = 0; i < argc; ++i) command_line += (i ? " " : "") + std::string(argv[i]);
  return csan::tasks::train(cfg, {command_line, argv, {}});
}

}  // namespace

int main(int argc, char** argv) { return csan::run_main("csan-train", train_main, argc, argv); }
