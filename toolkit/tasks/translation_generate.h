// csan-generate on translation checkpoints: the task's options (where the input comes
// from, batching, output format, precision and the search: beam search or sampling)
// and its generation: the checkpoints are loaded as an ensemble on the device the
// options and the checkpoint's precision call for, converted to the decoding precision
// and run over binarized data (--data) or raw text (--input) by translate()
// (translation_generate_run.h), on the task-independent search in toolkit/generation/.
#pragma once

#include <boost/program_options/options_description.hpp>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "toolkit/checkpoint/checkpoint.h"
#include "toolkit/generation/inference_precision.h"
#include "toolkit/generation/loaded_ensemble.h"
#include "toolkit/tasks/generate.h"

namespace csan::tasks {

// The task's section of csan-generate's options, bound to `options`.
std::unique_ptr<boost::program_options::options_description> translation_generate_options(GenerateOptions& options);

// Throws csan::Error for bad options, checkpoints that do not form an ensemble, and bad
// input (naming the option, file or line).
void generate_translations(const GenerateOptions& options, checkpoint::CheckpointReader& first, std::ostream& out,
                           std::ostream& log);

// Models ready to decode with and the precision they decode in.
struct DecodingModels {
  generation::LoadedEnsemble ensemble;
  generation::InferencePrecision precision;  // the requested one, or an inference checkpoint's own
};

// Loads `paths` (an ensemble; `first` is paths[0] already open) for decoding in `requested`
// precision: on the CPU when `cpu` or the precision runs only there, else on the GPU when
// there is one; an inference-only checkpoint decodes in its own precision (another one is
// an error naming the file). Converts the models and logs what it did to `log`.
DecodingModels load_for_decoding(const std::vector<std::string>& paths, const generation::InferencePrecision& requested,
                                 bool cpu, checkpoint::CheckpointReader& first, std::ostream& log,
                                 bool use_ema = false);

// Translation models and their data from checkpoints (several: an ensemble, which must
// share the dictionaries). `first`, when given, is paths[0] already open. Throws
// csan::Error naming the file for a missing or corrupt checkpoint, one of another task,
// and an ensemble member whose dictionaries differ from the first one's. The models
// live on `device`; with `use_ema` their weights are the checkpoints' EMA.
generation::LoadedEnsemble load_translation_ensemble(const std::vector<std::string>& paths,
                                                     checkpoint::CheckpointReader* first = nullptr,
                                                     const torch::Device& device = torch::kCPU, bool use_ema = false);

}  // namespace csan::tasks
