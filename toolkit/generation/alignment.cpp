#include "toolkit/generation/alignment.h"

#include <algorithm>
#include <cstdio>
#include <set>
#include <utility>

#include "toolkit/core/error.h"

namespace csan::generation {

namespace {

int64_t unit_count(const std::vector<int64_t>& units) {
  int64_t count = 0;
  for (int64_t u : units) count = std::max(count, u + 1);
  return count;
}

std::string six_decimals(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.6f", value);
  return buffer;
}

void check_shape(const std::vector<float>& attention, size_t sources, size_t targets) {
  if (attention.size() != sources * targets)
    throw Error("alignment: attention of " + std::to_string(attention.size()) + " values for " +
                std::to_string(targets) + " target x " + std::to_string(sources) + " source tokens");
}

}  // namespace

AlignmentFormat parse_alignment_format(const std::string& name) {
  if (name.empty()) return AlignmentFormat::none;
  if (name == "hard") return AlignmentFormat::hard;
  if (name == "soft") return AlignmentFormat::soft;
  throw Error("--print-alignment: unknown kind '" + name + "' (hard or soft)", ErrorKind::bad_option);
}

std::string hard_alignment(const std::vector<float>& attention, const std::vector<int64_t>& source_units,
                           const std::vector<int64_t>& target_units) {
  const size_t sources = source_units.size();
  check_shape(attention, sources, target_units.size());
  std::set<std::pair<int64_t, int64_t>> pairs;  // (target, source): ordered by target, then source
  for (size_t t = 0; t < target_units.size(); ++t) {
    if (target_units[t] < 0) continue;
    int64_t best = -1;
    for (size_t s = 0; s < sources; ++s)
      if (source_units[s] >= 0 && (best < 0 || attention[t * sources + s] > attention[t * sources + best]))
        best = static_cast<int64_t>(s);
    if (best >= 0) pairs.emplace(target_units[t], source_units[best]);
  }
  std::string line;
  for (const auto& [t, s] : pairs) line += (line.empty() ? "" : " ") + std::to_string(s) + "-" + std::to_string(t);
  return line;
}

std::string soft_alignment(const std::vector<float>& attention, const std::vector<int64_t>& source_units,
                           const std::vector<int64_t>& target_units, bool every_token) {
  const size_t sources = source_units.size();
  check_shape(attention, sources, target_units.size());
  std::string line;
  auto add_group = [&line](const std::vector<double>& probabilities) {
    std::string group;
    for (double p : probabilities) group += (group.empty() ? "" : ",") + six_decimals(p);
    line += (line.empty() ? "" : " ") + group;
  };
  if (every_token) {
    for (size_t t = 0; t < target_units.size(); ++t)
      add_group(std::vector<double>(attention.begin() + static_cast<std::ptrdiff_t>(t * sources),
                                    attention.begin() + static_cast<std::ptrdiff_t>((t + 1) * sources)));
    return line;
  }
  const int64_t source_words = unit_count(source_units), target_words = unit_count(target_units);
  std::vector<std::vector<double>> groups(static_cast<size_t>(target_words),
                                          std::vector<double>(static_cast<size_t>(source_words), 0.0));
  std::vector<int64_t> pieces(static_cast<size_t>(target_words), 0);
  for (size_t t = 0; t < target_units.size(); ++t) {
    if (target_units[t] < 0) continue;
    ++pieces[static_cast<size_t>(target_units[t])];
    for (size_t s = 0; s < sources; ++s)
      if (source_units[s] >= 0)
        groups[static_cast<size_t>(target_units[t])][static_cast<size_t>(source_units[s])] +=
            attention[t * sources + s];
  }
  for (size_t w = 0; w < groups.size(); ++w) {
    for (double& p : groups[w]) p /= static_cast<double>(std::max<int64_t>(1, pieces[w]));
    add_group(groups[w]);
  }
  return line;
}

}  // namespace csan::generation
