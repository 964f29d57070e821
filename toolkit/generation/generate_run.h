// csan-generate's translation: read binarized data or raw text, translate in
// length-sorted batches with loaded models, print results in input order and a summary
// (sentences, tokens/s, BLEU when there are references). The translation task loads
// the checkpoints and calls it (toolkit/tasks/generate.h is csan-generate's entry).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "toolkit/generation/inference_precision.h"
#include "toolkit/generation/loaded_ensemble.h"
#include "toolkit/generation/search_options.h"

namespace csan::generation {

struct GenerateOptions {
  std::vector<std::string> paths;  // checkpoints; several = ensemble
  std::string data_dir;            // binarized data (csan-preprocess output) ...
  std::string gen_subset = "test";
  std::string input;                     // ... or raw text: a file, or "-" for stdin
  std::string source_lang, target_lang;  // default: the checkpoint's
  int64_t batch_size = 64;               // sentences per batch (0: no limit)
  int64_t max_tokens = 0;                // padded source tokens per batch (0: no limit)
  int64_t parallel_batches = 0;          // batches translated at once (0: one per thread; see parallel_batches.h)
  int64_t buffer_size = 0;               // raw input lines read before translating (0: raw_input_buffer)
  std::string output_format = "fairseq";
  std::string results_path;  // write DIR/generate-SUBSET.txt instead of stdout
  SearchOptions search;
  InferencePrecision precision;  // --precision, --quantize-skip
  bool cpu = false;              // --cpu: decode on the CPU even when a GPU is available
  int64_t threads = 0;           // --threads: CPU threads (0: OMP_NUM_THREADS, else every usable CPU)
  std::string shortlist;         // --shortlist FILE: lexical shortlist (build-shortlist)
};

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
GenerateSummary translate(const GenerateOptions& options, const LoadedEnsemble& ensemble, std::ostream& out,
                          std::ostream& log);

}  // namespace csan::generation
