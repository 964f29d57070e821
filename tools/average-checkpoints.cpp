// average-checkpoints: fairseq's scripts/average_checkpoints.py for csan checkpoints.
//   average-checkpoints --inputs a.pt b.pt c.pt --output avg.pt
//   average-checkpoints --inputs SAVE_DIR --num-epoch-checkpoints 5 --output avg.pt
#include <boost/program_options.hpp>
#include <iostream>
#include <string>
#include <vector>

#include "toolkit/core/error.h"
#include "toolkit/loading/checkpoint_averaging.h"
#include "toolkit/tasks/recipe.h"

namespace po = boost::program_options;

namespace {

int average_main(int argc, char** argv) {
  std::vector<std::string> inputs;
  std::string output;
  int64_t epochs = 0, updates = 0, upper_bound = -1;
  po::options_description options("average-checkpoints --inputs CKPT... | DIR --num-*-checkpoints N --output FILE");
  options.add_options()("help,h", "show this help")(
      "inputs", po::value<std::vector<std::string>>(&inputs)->multitoken(), "checkpoints, or one directory")(
      "output", po::value<std::string>(&output), "the averaged checkpoint to write")(
      "num-epoch-checkpoints", po::value<int64_t>(&epochs), "average the last N epoch checkpoints of DIR")(
      "num-update-checkpoints", po::value<int64_t>(&updates), "average the last N update checkpoints of DIR")(
      "checkpoint-upto", po::value<int64_t>(&upper_bound), "ignore checkpoints after this epoch (or update)");
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, options), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw csan::Error(std::string(e.what()) + " (see average-checkpoints --help)");
  }
  if (vm.count("help")) {
    std::cout << options;
    return 0;
  }
  if (inputs.empty()) throw csan::Error("missing --inputs");
  if (output.empty()) throw csan::Error("missing --output");
  if (epochs > 0 && updates > 0)
    throw csan::Error("give --num-epoch-checkpoints or --num-update-checkpoints, not both");
  if (epochs > 0 || updates > 0) {
    if (inputs.size() != 1) throw csan::Error("--num-*-checkpoints: --inputs must be one directory");
    inputs = csan::loading::last_checkpoints(inputs[0], epochs > 0 ? epochs : updates, updates > 0, upper_bound);
  }
  csan::loading::average_checkpoints(inputs, output, csan::tasks::describe_model);
  std::cerr << "averaged " << inputs.size() << " checkpoints into " << output << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return csan::run_main("average-checkpoints", average_main, argc, argv); }
