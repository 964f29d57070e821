// How well predicted word alignments match true ones (the toy corpus's .align files):
// precision, recall and F1 over "i-j" source-target pairs (Pharaoh format, 0-based, as
// fairseq's A- lines and csan-toy-corpus --alignments write them), beside a diagonal
// baseline that knows only the sentence lengths.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace csan::scoring {

using AlignmentPairs = std::set<std::pair<int64_t, int64_t>>;  // (source, target)

// "0-0 2-1 ..." -> pairs; throws csan::Error "WHERE: ..." for anything else.
AlignmentPairs parse_pharaoh(const std::string& line, const std::string& where);

// The baseline: target word j aligned to source word floor((j + 0.5) * S / T).
AlignmentPairs diagonal_alignment(int64_t source_words, int64_t target_words);

struct AlignmentCounts {
  int64_t matched = 0, predicted = 0, truth = 0;
  void add(const AlignmentPairs& predicted_pairs, const AlignmentPairs& true_pairs);
  double precision() const { return predicted ? double(matched) / double(predicted) : 0.0; }
  double recall() const { return truth ? double(matched) / double(truth) : 0.0; }
  double f1() const;
};

// One sentence of csan-generate's fairseq output: its S-, T- and first D- and A- lines.
struct GeneratedSentence {
  std::string source, reference, hypothesis, alignment;
  bool has_alignment = false;
};
// The sentences of a csan-generate output by id; `origin` names it in errors.
std::map<int64_t, GeneratedSentence> parse_generate_output(const std::vector<std::string>& lines,
                                                           const std::string& origin);

struct AlignmentReport {
  int64_t compared = 0;  // sentences whose hypothesis is the reference (the truth describes it)
  int64_t skipped = 0;   // the others
  AlignmentCounts model, diagonal;
  std::vector<std::string> lines;  // the report as printed
};
// Scores the A- lines of `generated` against `truth` (line i: sentence id i). Throws
// csan::Error naming the file for a sentence without an A- line or a truth line missing.
AlignmentReport score_alignments(const std::map<int64_t, GeneratedSentence>& generated,
                                 const std::vector<std::string>& truth, const std::string& generate_origin,
                                 const std::string& truth_origin);

}  // namespace csan::scoring
