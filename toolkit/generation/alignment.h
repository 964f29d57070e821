// Alignments between a source and a hypothesis from the attention the search kept
// (SearchOptions::attention), printed as fairseq's A- lines: fairseq's
// utils.extract_hard_alignment and extract_soft_alignment, optionally mapped from subword
// tokens to words (csan-generate --alignment-words).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace csan::generation {

enum class AlignmentFormat { none, hard, soft };
// "" -> none, "hard", "soft"; anything else throws csan::Error naming --print-alignment.
AlignmentFormat parse_alignment_format(const std::string& name);

// `attention`: [target tokens x source tokens] row-major (Hypothesis::attention).
// `source_units` / `target_units`: for each token, the unit (token or word, counted from 0)
// it belongs to, -1 for </s> and padding (see TextCodec::units).
//
// hard: each target token's unit is aligned to the unit of the source token it attends
// to most (</s> and padding excluded; the first of equal maxima); "s-t" pairs, each once,
// ordered by target then source unit. Over tokens this is fairseq's list exactly.
std::string hard_alignment(const std::vector<float>& attention, const std::vector<int64_t>& source_units,
                           const std::vector<int64_t>& target_units);
// soft: one group per target unit, its probabilities over the source units ("%.6f",
// comma-separated; groups space-separated). Over tokens (every_token) as fairseq: every
// target token, </s> included, over every source token, </s> included. Over words: a
// word's probability is the sum over its source tokens, and a target word's group the
// mean over its tokens; </s> is left out on both sides.
std::string soft_alignment(const std::vector<float>& attention, const std::vector<int64_t>& source_units,
                           const std::vector<int64_t>& target_units, bool every_token);

}  // namespace csan::generation
