// The sacreBLEU 2.6.0 command line on local files as a library call: reads the
// references and systems, makes sacreBLEU's checks in its order (same messages and exit
// codes), scores and prints the same outputs. csan-score only parses options into
// ScoreOptions and calls score_run().
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "toolkit/scoring/metrics.h"

namespace csan::scoring {

struct ScoreOptions {
  std::vector<std::string> refs;                    // positional reference files
  std::optional<std::vector<std::string>> inputs;   // -i files; nullopt reads stdin
  int num_refs = 1;                                 // -nr: tab-separated references per line
  std::vector<std::string> metrics{"bleu"};         // bleu, chrf, ter
  bool sentence_level = false;
  BleuOptions bleu;
  ChrfOptions chrf;
  TerOptions ter;
  bool confidence = false;
  int confidence_n = 1000;
  bool paired_bs = false;
  bool paired_ar = false;
  int paired_bs_n = 1000;
  int paired_ar_n = 10000;
  int paired_jobs = 1;  // only parallelism; 1 (the default) and 0 use every core
  bool quiet = false;
  bool short_signature = false;
  bool score_only = false;
  int width = 1;
  std::string format = "json";  // json, text, latex
};

// The environment variables sacreBLEU reads.
struct ScoreEnvironment {
  std::optional<std::string> seed;       // SACREBLEU_SEED
  std::optional<std::string> format;     // SACREBLEU_FORMAT
  std::optional<std::string> model_dir;  // SACREBLEU (models for the spm/flores tokenizers)
  std::optional<std::string> home;       // HOME

  static ScoreEnvironment from_process();
};

// Runs one sacreBLEU invocation; returns the exit code (0, or sacreBLEU's 1/17 for the
// errors it reports itself, with its message on `err`). Missing or undecodable files and
// invalid options throw csan::Error (one line naming the file/line or option).
int score_run(const ScoreOptions& options, std::istream& in, std::ostream& out, std::ostream& err,
              const ScoreEnvironment& env);

}  // namespace csan::scoring
