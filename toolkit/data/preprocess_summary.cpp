#include <cstdio>

#include "toolkit/core/progress.h"
#include "toolkit/data/preprocess.h"

namespace csan::data {

std::string PreprocessSummary::format() const {
  std::string out;
  for (const auto& path : removed_temporaries) out += "removed the leftover of an interrupted run: " + path + "\n";
  char line[256];
  std::snprintf(line, sizeof line, "%-10s %-6s %12s %14s %9s\n", "split", "lang", "lines", "tokens", "unk");
  out += line;
  for (const auto& s : splits) {
    double unk_rate = s.tokens ? 100.0 * static_cast<double>(s.unknown) / static_cast<double>(s.tokens) : 0.0;
    std::snprintf(line, sizeof line, "%-10s %-6s %12lld %14lld %8.3f%%\n", s.split.c_str(), s.lang.c_str(),
                  static_cast<long long>(s.lines), static_cast<long long>(s.tokens), unk_rate);
    out += line;
  }
  if (train_lines_read > 0) {
    std::snprintf(line, sizeof line,
                  "filtered from train: %lld of %lld (%lld too short, %lld too long, %lld length ratio)\n",
                  static_cast<long long>(filtered.total()), static_cast<long long>(train_lines_read),
                  static_cast<long long>(filtered.too_short), static_cast<long long>(filtered.too_long),
                  static_cast<long long>(filtered.ratio));
    out += line;
  }
  out += "dictionaries:";
  for (const auto& [lang, size] : dictionary_sizes) out += " " + lang + " " + std::to_string(size);
  out += "\ntime: " + format_duration(seconds) + "\n";
  return out;
}

}  // namespace csan::data
