// Tercom's edit count as sacreBLEU 2.6.0 computes it (spec sections 6.2-6.3): a
// beam-limited word edit distance plus greedy block shifts, with sacreBLEU's caps.
// Words are compared as ids (the caller interns them).
#pragma once

#include <cstdint>
#include <vector>

namespace csan::scoring {

// Number of edits (shifts included) to turn hyp into ref. ref must not be empty
// (TER counts an empty reference as hyp.size() edits itself).
int64_t ter_edits(const std::vector<uint32_t>& hyp, const std::vector<uint32_t>& ref);

}  // namespace csan::scoring
