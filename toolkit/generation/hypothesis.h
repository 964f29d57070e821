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
};

}  // namespace csan::generation
