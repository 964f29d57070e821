// convert-checkpoint: an inference-only copy of a translation checkpoint with its
// projections stored in int8 (per-row scales) or bf16, which csan-generate loads
// directly (toolkit/loading/inference_checkpoint.h; training refuses the result), or a
// checkpoint of format 1 or 2 rewritten as format 3 (toolkit/loading/checkpoint_conversion.h).
// Both write format 3.
//   convert-checkpoint --input checkpoint_best.pt --output model.int8.pt --precision int8
//                      [--quantize-skip decoder.output_projection ...]
//   convert-checkpoint --input old.pt --output new.pt --format 3
#include <boost/program_options.hpp>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "toolkit/checkpoint/checkpoint.h"
#include "toolkit/core/error.h"
#include "toolkit/loading/checkpoint_conversion.h"
#include "toolkit/loading/inference_checkpoint.h"
#include "toolkit/nn/precision.h"
#include "toolkit/tasks/recipe.h"

namespace po = boost::program_options;

namespace {

int convert_main(int argc, char** argv) {
  std::string input, output, precision_name;
  int64_t format = 0;
  csan::generation::InferencePrecision precision;
  po::options_description options("convert-checkpoint --input CKPT --output FILE (--precision int8|bf16 | --format 3)");
  options.add_options()("help,h", "show this help")("input", po::value(&input), "training checkpoint")(
      "output", po::value(&output), "inference-only checkpoint to write")("precision", po::value(&precision_name),
                                                                          "int8 or bf16")(
      "format", po::value(&format),
      "3: rewrite a checkpoint of format 1 or 2 (training or inference-only) as format 3, the one csan writes")(
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
  if (vm.count("format") && format != csan::checkpoint::kFormatVersion)
    throw csan::Error("--format " + std::to_string(format) + ": convert-checkpoint writes format " +
                      std::to_string(csan::checkpoint::kFormatVersion) + " only");
  if (precision_name.empty() && !vm.count("format")) throw csan::Error("missing --precision int8|bf16 or --format 3");
  if (precision_name.empty()) {
    csan::loading::rewrite_as_format3(input, output, csan::tasks::describe_model);
    std::cerr << "convert-checkpoint: " << output << " (format " << format << ", "
              << std::filesystem::file_size(output) / 1024 << " KiB; " << input << ": "
              << std::filesystem::file_size(input) / 1024 << " KiB)\n";
    return 0;
  }
  precision.precision = csan::nn::parse_precision(precision_name, "--precision");
  csan::loading::write_inference_checkpoint(input, output, precision, csan::tasks::describe_model);
  std::cerr << "convert-checkpoint: " << output << " (" << precision_name << ", "
            << std::filesystem::file_size(output) / 1024 << " KiB; " << input << ": "
            << std::filesystem::file_size(input) / 1024 << " KiB)\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return csan::run_main("convert-checkpoint", convert_main, argc, argv); }
