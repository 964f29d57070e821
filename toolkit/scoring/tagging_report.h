// csan-score --task tagging's outputs: JSON (one object: the reference, the word-class
// definitions and counts, then per system its accuracies with correct/total counts,
// per-tag recall and, with --paired-bs, the bootstrap mean, 95% CI and p-value against
// the first system) and text (a table of accuracies, then recall per reference tag).
#pragma once

#include <string>

#include "toolkit/scoring/tagging_accuracy.h"

namespace csan::scoring {

std::string tagging_report_json(const TaggingScores& scores, int width);
std::string tagging_report_text(const TaggingScores& scores, int width);

}  // namespace csan::scoring
