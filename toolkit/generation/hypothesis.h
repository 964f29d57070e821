// One finished output of the search.
#pragma once

#include <cstdint>
#include <vector>

namespace csan::generation {

struct Hypothesis {
  std::vector<int64_t> tokens;          // target ids, ending with </s>
  std::vector<float> positional_scores; // log p of each token (natural log), </s> included
  // Sum of positional_scores / tokens.size()^lenpen (fairseq's normalization).
  double score = 0;
  // With SearchOptions::attention: row t (of tokens.size()) is the attention over the
  // source when token t was chosen, source_length columns (the source's </s> included).
  std::vector<float> attention;
  int64_t source_length = 0;
};

}  // namespace csan::generation
