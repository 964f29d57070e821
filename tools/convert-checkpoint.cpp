// convert-checkpoint: an inference-only copy of a translation checkpoint with its
// projections stored in int8 (per-row scales) or bf16, which csan-generate loads
// directly (toolkit/loading/inference_checkpoint.h). Training refuses the result.
//   convert-checkpoint --input checkpoint_best.pt --output model.int8.pt --precision int8
//                      [--quantize-skip decoder.output_projection ...]
#include <boost/program_options.hpp>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "toolkit/core/error.h"
#include "toolkit/loading/inference_checkpoint.h"
#include "toolkit/nn/precision.h"
#include "toolkit/tasks/recipe.h"

namespace po = boost::program_options;

namespace {

int convert_main(int argc, char** argv) {
  std::string input, output, precision_name;
  csan::generation::InferencePrecision precision;
  po::options_description options("convert-checkpoint --input CKPT --output FILE --precision int8|bf16");
  options.add_options()("help,h", "show this help")("input", po::value(&input), "training checkpoint")(
      "output", po::value(&output), "inference-only checkpoint to write")("precision", po::value(&precision_name),
                                                                          "int8 or bf16")(
      "quantize-skip", po::value(&precision.quantize_skip)->multitoken(),
      "layers kept fp32 (parameter-name prefixes, e.g. decoder.output_projection)");
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, options), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw csan::Error(std::string(e.what()) + " (see convert-checkpoint --help)");
  }
  if (vm.count("help")) {
    std::cout << options;
    return 0;
  }
  if (input.empty()) throw csan::Error("missing --input CKPT");
  if (output.empty()) throw csan::Error("missing --output FILE");
  if (precision_name.empty()) throw csan::Error("missing --precision int8|bf16");
  precision.precision = csan::nn::parse_precision(precision_name, "--precision");
  csan::loading::write_inference_checkpoint(input, output, precision, csan::tasks::describe_model);
  std::cerr << "convert-checkpoint: " << output << " (" << precision_name << ", "
            << std::filesystem::file_size(output) / 1024 << " KiB; " << input << ": "
            << std::filesystem::file_size(input) / 1024 << " KiB)\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return csan::run_main("convert-checkpoint", convert_main, argc, argv); }
