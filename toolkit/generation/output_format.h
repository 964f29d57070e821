// How results are printed. fairseq's format per sentence: S- (source text), T-
// (reference text, when there is one), then for each hypothesis H- (score, dictionary
// pieces), D- (score, detokenized text) and P- (positional scores). Scores are in base
// 2 as fairseq prints them: H/D the normalized score / ln 2, P each log p / ln 2 with 4
// decimals; with alignments (--print-alignment) an A- line after each P- line. The plain
// format is one detokenized best hypothesis per line.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "toolkit/generation/hypothesis.h"
#include "toolkit/generation/text_codec.h"

namespace csan::generation {

enum class OutputFormat { Fairseq, Plain };
OutputFormat parse_output_format(const std::string& name);  // "fairseq" | "plain"

struct SentenceResult {
  int64_t id = 0;
  std::string source;                    // text for the S- line
  std::optional<std::string> reference;  // text for the T- line
  std::vector<Hypothesis> hypotheses;    // best first; empty for an empty input
  bool with_alignments = false;          // print A- lines ...
  std::vector<std::string> alignments;   // ... these, one per hypothesis (alignment.h)
};

// The lines of one sentence, each ending with '\n'.
std::string format_result(const SentenceResult& result, const TextCodec& target, OutputFormat format);

}  // namespace csan::generation
