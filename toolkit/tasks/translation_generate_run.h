// csan-generate's translation: read binarized data or raw text, translate in
// length-sorted batches with loaded models, print results in input order and a summary
// (sentences, tokens/s, BLEU when there are references). The translation task loads
// the checkpoints and calls it (translation_generate.h).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "toolkit/generation/loaded_ensemble.h"
#include "toolkit/tasks/generate.h"

namespace csan::tasks {

struct GenerateSummary {
  int64_t sentences = 0;
  int64_t tokens = 0;                 // target tokens of the best hypotheses (</s> included)
  int64_t truncated = 0;              // sources cut to the model's maximum positions
  double seconds = 0;                 // translation time (model loading excluded)
  int64_t most_parallel_batches = 0;  // the most batches translated at once
  std::optional<double> bleu;
  std::vector<std::string> lines;  // the summary as printed
};

// Raw input lines read before translating when --buffer-size is 0: 1 for a person typing
// at a terminal, else batches_per_buffer batches of --batch-size (64 when 0) lines, at
// least 16 and two per thread, so that several batches translate at once.
int64_t raw_input_buffer(const GenerateOptions& options, bool from_terminal, int64_t threads);

// Checks the options that do not need a model (throws csan::Error naming the option).
void validate_generate_options(const GenerateOptions& options);

// Translates with `ensemble` (loaded from options.paths). Results go to `out` (unless
// results_path is set), warnings and, in plain format, the summary to `log`. Throws
// csan::Error for bad options or input.
GenerateSummary translate(const GenerateOptions& options, const generation::LoadedEnsemble& ensemble, std::ostream& out,
                          std::ostream& log);

}  // namespace csan::tasks
