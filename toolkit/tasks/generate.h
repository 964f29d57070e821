// csan-generate as a library call: reads which task trained the checkpoint(s) and lets
// that task generate (translation_generate.h: beam search or sampling; tagging_generate.h:
// tags). Each task declares its own part of csan-generate's options
// (TaskSpec::generate_options); an option of another task is refused.
#pragma once

#include <boost/program_options/options_description.hpp>
#include <cstdint>
#include <iosfwd>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "toolkit/generation/inference_precision.h"
#include "toolkit/generation/search_options.h"

namespace csan::tasks {

// csan-generate's settings: its own (the checkpoints, the threads) and every task's, each
// task's section of the options filling the fields its generation reads.
struct GenerateOptions {
  std::vector<std::string> paths;  // checkpoints; several = ensemble
  int64_t threads = 0;             // --threads: CPU threads (0: OMP_NUM_THREADS, else every usable CPU)
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
  generation::SearchOptions search;
  generation::InferencePrecision precision;  // --precision, --quantize-skip
  bool cpu = false;                          // --cpu: decode on the CPU even when a GPU is available
  std::string shortlist;                     // --shortlist FILE: lexical shortlist (build-shortlist)
  bool use_ema = false;                      // --use-ema: the checkpoints' EMA weights (translation)
  std::string print_alignment;               // --print-alignment: "", hard or soft (generation/alignment.h)
  bool alignment_words = false;              // --alignment-words: align words, not subword tokens
  std::string constraints;                   // --constraints: "", ordered or unordered (raw input only)
};

// The task that wrote the checkpoint at `path`. Throws csan::Error naming the file when
// it is missing or corrupt or its task is not one of this build's.
std::string checkpoint_task(const std::string& path);

// Every registered task's section of csan-generate's options, bound to `options`.
std::map<std::string, std::unique_ptr<boost::program_options::options_description>> generate_option_sections(
    GenerateOptions& options);

// Throws csan::Error for a missing or corrupt checkpoint, checkpoints of different
// tasks in one ensemble, and whatever the task's generation refuses.
void run_generate(const GenerateOptions& options, std::ostream& out, std::ostream& log);

}  // namespace csan::tasks
