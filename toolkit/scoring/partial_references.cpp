#include "toolkit/scoring/partial_references.h"

#include <map>

#include "toolkit/core/error.h"

namespace csan::scoring {

namespace {

std::size_t segment_count(const ReferenceStreams& refs) { return refs.streams.empty() ? 0 : refs.streams[0].size(); }

// Which streams give segment i a reference.
std::vector<bool> streams_of(const ReferenceStreams& refs, std::size_t i) {
  std::vector<bool> pattern(refs.streams.size());
  for (std::size_t r = 0; r < pattern.size(); ++r) pattern[r] = refs.present[r][i];
  return pattern;
}

}  // namespace

int ReferenceStreams::count_per_segment() const {
  if (present.empty()) return static_cast<int>(streams.size());
  int count = -2;  // not seen yet
  for (std::size_t i = 0; i < segment_count(*this); ++i) {
    int here = 0;
    for (const auto& stream : present) here += stream[i] ? 1 : 0;
    if (here == 0) throw Error("segment " + std::to_string(i + 1) + " has no reference", ErrorKind::bad_input);
    count = count == -2 || count == here ? here : -1;
  }
  return count == -2 ? static_cast<int>(streams.size()) : count;
}

std::vector<Stats> segment_stats(const Metric& metric, const std::vector<std::string>& hyps,
                                 const ReferenceStreams& refs) {
  if (refs.present.empty()) return metric.segment_stats(hyps, refs.streams);
  refs.count_per_segment();  // rejects segments without references
  std::map<std::vector<bool>, std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < hyps.size(); ++i) groups[streams_of(refs, i)].push_back(i);

  std::vector<Stats> all(hyps.size());
  for (const auto& [pattern, segments] : groups) {
    std::vector<std::string> group_hyps;
    for (std::size_t i : segments) group_hyps.push_back(hyps[i]);
    std::vector<std::vector<std::string>> group_refs;
    for (std::size_t r = 0; r < pattern.size(); ++r) {
      if (!pattern[r]) continue;
      group_refs.emplace_back();
      for (std::size_t i : segments) group_refs.back().push_back(refs.streams[r][i]);
    }
    std::vector<Stats> stats = metric.segment_stats(group_hyps, group_refs);
    for (std::size_t k = 0; k < segments.size(); ++k) all[segments[k]] = std::move(stats[k]);
  }
  return all;
}

}  // namespace csan::scoring
