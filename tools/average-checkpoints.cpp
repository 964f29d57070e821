// average-checkpoints: fairseq's scripts/average_checkpoints.py for csan checkpoints.
//   average-checkpoints --inputs a.pt b.pt c.pt --output avg.pt
//   average-checkpoints --inputs SAVE_DIR --num-epoch-checkpoints 5 --output avg.pt
#include <boost/program_options.hpp>

#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "toolkit/core/error.h"
#include "toolkit/generation/checkpoint_averaging.h"

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace {

// True when a and b name the same file: the same canonical path (symbolic links, "..",
// "./") or, for an existing file, the same inode (hard links).
bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  if (fs::equivalent(a, b, ec) && !ec) return true;
  const fs::path ca = fs::weakly_canonical(a, ec);
  if (ec) return false;
  const fs::path cb = fs::weakly_canonical(b, ec);
  return !ec && ca == cb;
}

// Refused before any checkpoint is loaded: writing the average over one of its inputs
// would replace a checkpoint of the run by the average.
void check_paths(const std::vector<std::string>& inputs, const std::string& output) {
  std::error_code ec;
  for (const auto& input : inputs)
    if (fs::is_directory(input, ec))
      throw csan::Error(input + ": is a directory; give checkpoint files, or one directory with "
                                "--num-epoch-checkpoints or --num-update-checkpoints");
  if (fs::is_directory(output, ec))
    throw csan::Error(output + ": is a directory; --output is the file to write");
  for (const auto& input : inputs)
    if (same_file(input, output))
      throw csan::Error("--output " + output + " is also one of the --inputs (" + input +
                        "); write the average to a new file");
}

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
  if (epochs > 0 && updates > 0) throw csan::Error("give --num-epoch-checkpoints or --num-update-checkpoints, not both");
  if (epochs > 0 || updates > 0) {
    if (inputs.size() != 1) throw csan::Error("--num-*-checkpoints: --inputs must be one directory");
    inputs = csan::generation::last_checkpoints(inputs[0], epochs > 0 ? epochs : updates, updates > 0, upper_bound);
  }
  check_paths(inputs, output);
  csan::generation::average_checkpoints(inputs, output);
  std::cerr << "averaged " << inputs.size() << " checkpoints into " << output << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return csan::run_main("average-checkpoints", average_main, argc, argv); }
