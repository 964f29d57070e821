// csan-generate as a library call: load the checkpoint(s), read binarized data or
// raw text, translate in length-sorted batches, print results in input order and a
// summary (sentences, tokens/s, BLEU when there are references).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "toolkit/generation/search_options.h"

namespace csan::generation {

struct GenerateOptions {
  std::vector<std::string> paths;  // checkpoints; several = ensemble
  std::string data_dir;            // binarized data (csan-preprocess output) ...
  std::string gen_subset = "test";
  std::string input;               // ... or raw text: a file, or "-" for stdin
  std::string source_lang, target_lang;  // default: the checkpoint's
  int64_t batch_size = 64;         // sentences per batch (0: no limit)
  int64_t max_tokens = 0;          // padded source tokens per batch (0: no limit)
  int64_t parallel_batches = 0;    // batches translated at once (0: one per thread; see parallel_batches.h)
  int64_t buffer_size = 0;         // raw input lines read before translating (0: batch size)
  std::string output_format = "fairseq";
  std::string results_path;        // write DIR/generate-SUBSET.txt instead of stdout
  SearchOptions search;
};

struct GenerateSummary {
  int64_t sentences = 0;
  int64_t tokens = 0;     // target tokens of the best hypotheses (</s> included)
  int64_t truncated = 0;  // sources cut to the model's maximum positions
  double seconds = 0;     // translation time (model loading excluded)
  std::optional<double> bleu;
  std::vector<std::string> lines;  // the summary as printed
};

// Results go to `out` (unless results_path is set), warnings and, in plain format, the
// summary to `log`. Throws csan::Error for bad options or input.
GenerateSummary run_generate(const GenerateOptions& options, std::ostream& out, std::ostream& log);

}  // namespace csan::generation
