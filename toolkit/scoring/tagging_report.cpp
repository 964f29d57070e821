#include "toolkit/scoring/tagging_report.h"

#include <algorithm>
#include <cstdio>

#include "toolkit/core/progress.h"

namespace csan::scoring {

namespace {

std::string fixed(double value, int width) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", width, value);
  return buf;
}

std::string quoted(const std::string& s) { return "\"" + json_escape(s) + "\""; }

std::string count_json(const Count& c, int width) {
  return "{\"score\": " + fixed(c.percent(), width) + ", \"correct\": " + std::to_string(c.correct) +
         ", \"total\": " + std::to_string(c.total) + "}";
}

std::string pad(const std::string& s, size_t width, bool right = false) {
  if (s.size() >= width) return s;
  return right ? std::string(width - s.size(), ' ') + s : s + std::string(width - s.size(), ' ');
}

// "93.56", with the bootstrap's "(μ = 93.50 ± 0.40)" and p-value "(p = 0.0010)*" when paired.
std::string text_cell(const SystemScores& system, size_t metric, bool baseline, int width) {
  std::string cell = fixed(system.accuracies[metric].second.percent(), width);
  if (system.paired.empty()) return cell;
  const PairedResult& r = system.paired[metric];
  if (r.mean && r.ci) cell += " (μ = " + fixed(*r.mean, width) + " ± " + fixed(*r.ci, width) + ")";
  if (!baseline && r.p_value) cell += " (p = " + fixed(*r.p_value, 4) + ")" + (*r.p_value < 0.05 ? "*" : " ");
  return cell;
}

}  // namespace

std::string tagging_report_json(const TaggingScores& s, int width) {
  std::string out = "{\n  \"reference\": " + quoted(s.reference) + ",\n  \"tag_column\": " + quoted(s.tag_column) +
                    ",\n  \"words\": " + std::to_string(s.words) + ",\n";
  if (s.classes) {
    out += "  \"oov_words\": " + std::to_string(s.oov_words) + ",\n  \"oov_definition\": " +
           quoted("form not in " + s.oov_source) + ",\n  \"ambiguous_words\": " + std::to_string(s.ambiguous_words) +
           ",\n  \"ambiguous_definition\": \"not OOV, 2+ tags in the training data\",\n";
  }
  if (s.paired) out += "  \"paired_bs_n\": " + std::to_string(s.paired_bs_n) + ",\n  \"seed\": " + quoted(s.seed) + ",\n";
  out += "  \"systems\": [\n";
  for (size_t i = 0; i < s.systems.size(); ++i) {
    const SystemScores& system = s.systems[i];
    out += "    {\n      \"name\": " + quoted(system.name) + (s.paired && i == 0 ? ",\n      \"baseline\": true" : "");
    for (size_t m = 0; m < system.accuracies.size(); ++m) {
      const auto& [name, count] = system.accuracies[m];
      out += ",\n      " + quoted(name) + ": " + count_json(count, width);
      if (!system.paired.empty()) {
        const PairedResult& r = system.paired[m];
        out.pop_back();  // reopen the object for the bootstrap fields
        if (r.mean) out += ", \"mean\": " + fixed(*r.mean, width);
        if (r.ci) out += ", \"ci\": " + fixed(*r.ci, width);
        if (r.p_value) out += ", \"p_value\": " + fixed(*r.p_value, 4);
        out += "}";
      }
    }
    out += ",\n      \"tag_recall\": {";
    size_t n = 0;
    for (const auto& [tag, count] : system.tag_recall)
      out += std::string(n++ ? ", " : "") + "\n        " + quoted(tag) + ": " + count_json(count, width);
    out += "\n      }\n    }" + std::string(i + 1 < s.systems.size() ? "," : "") + "\n";
  }
  return out + "  ]\n}\n";
}

std::string tagging_report_text(const TaggingScores& s, int width) {
  std::string out = "Reference " + s.reference + " (" + s.tag_column + "): " + std::to_string(s.words) + " words";
  if (s.classes)
    out += "; OOV (form not in " + s.oov_source + "): " + std::to_string(s.oov_words) +
           "; ambiguous (not OOV, 2+ tags in training): " + std::to_string(s.ambiguous_words);
  out += "\n";
  if (s.paired)
    out += "Paired bootstrap resampling of sentences (n=" + std::to_string(s.paired_bs_n) + ", seed " + s.seed +
           ") against " + s.systems[0].name + ": mean ± 95% CI, p-value (* p < 0.05)\n";
  size_t name_width = 6;
  for (const auto& system : s.systems) name_width = std::max(name_width, system.name.size());
  const auto& first = s.systems[0].accuracies;
  std::vector<size_t> widths(first.size(), 0);
  std::vector<std::vector<std::string>> cells;
  for (size_t i = 0; i < s.systems.size(); ++i) {
    cells.emplace_back();
    for (size_t m = 0; m < first.size(); ++m) {
      cells.back().push_back(text_cell(s.systems[i], m, i == 0, width));
      widths[m] = std::max({widths[m], cells.back().back().size(), first[m].first.size()});
    }
  }
  out += "\n" + pad("System", name_width);
  for (size_t m = 0; m < first.size(); ++m) out += "  " + pad(first[m].first, widths[m]);
  out += "\n";
  for (size_t i = 0; i < s.systems.size(); ++i) {
    out += pad(s.systems[i].name, name_width);
    for (size_t m = 0; m < first.size(); ++m) out += "  " + pad(cells[i][m], widths[m]);
    out += "\n";
  }
  out += "\nRecall per reference tag\n" + pad("tag", 8) + pad("words", 8, true);
  for (const auto& system : s.systems) out += "  " + pad(system.name, std::max<size_t>(7, system.name.size()), true);
  out += "\n";
  for (const auto& [tag, count] : s.systems[0].tag_recall) {
    out += pad(tag, 8) + pad(std::to_string(count.total), 8, true);
    for (const auto& system : s.systems)
      out += "  " + pad(fixed(system.tag_recall.at(tag).percent(), width), std::max<size_t>(7, system.name.size()), true);
    out += "\n";
  }
  return out;
}

}  // namespace csan::scoring
