// scoring::score_run, csan-score's whole path, on fuzzed reference and system files: the
// first byte picks the options (metric, tokenizer, tab-separated references, stdin,
// sentence level, output format, resampling), the rest is NUL-separated files.
#include <sstream>

#include "../fuzz_targets.h"
#include "toolkit/core/error.h"
#include "toolkit/scoring/score_run.h"

namespace csan::fuzz {

void score_inputs(const uint8_t* data, size_t size) {
  if (size < 1) return;
  const uint8_t bits = data[0];
  const std::vector<std::string> files = split_at_nul(data + 1, size - 1, 3);
  scoring::ScoreOptions options;
  static const char* const kMetrics[] = {"bleu", "chrf", "ter", "all"};
  const std::string metric = kMetrics[bits & 3];
  options.metrics =
      metric == "all" ? std::vector<std::string>{"bleu", "chrf", "ter"} : std::vector<std::string>{metric};
  static const char* const kTokenizers[] = {"13a", "intl", "zh", "char", "none", "13a", "13a", "13a"};
  options.bleu.tokenize = kTokenizers[(bits >> 2) & 7];
  options.chrf.word_order = (bits & 0x20) ? 2 : 0;
  options.ter.normalized = options.ter.no_punct = options.ter.asian_support = (bits & 0x20) != 0;
  options.refs = {scratch_file("ref", files[0])};
  if (bits & 0x40) options.num_refs = 2;  // the reference file is tab-separated
  options.quiet = true;
  const bool use_stdin = (bits & 0x80) != 0;
  std::istringstream in(files.size() > 1 ? files[1] : "");
  if (!use_stdin) {
    std::vector<std::string> systems{scratch_file("sys1", files.size() > 1 ? files[1] : "")};
    if (files.size() > 2) systems.push_back(scratch_file("sys2", files[2]));
    options.inputs = systems;
  }
  // Modes that depend on the number of systems: one gets sentence level or a bootstrap
  // interval, several a paired test (few resamples: each input must stay fast).
  const size_t variant = files[0].size() % 4;
  if (options.metrics.size() == 1 && variant == 0) options.sentence_level = true;
  if (variant == 1) {
    options.confidence = true;
    options.confidence_n = 5;
  }
  if (variant == 2) {
    options.paired_bs = true;
    options.paired_bs_n = 5;
  }
  if (variant == 3) {
    options.paired_ar = true;
    options.paired_ar_n = 5;
  }
  options.format = (bits & 0x10) ? "text" : "json";
  std::ostringstream out, err;
  scoring::ScoreEnvironment env;
  try {
    scoring::score_run(options, in, out, err, env);
  } catch (const Error&) {
  }
}

}  // namespace csan::fuzz
