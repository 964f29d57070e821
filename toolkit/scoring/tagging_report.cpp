#include "toolkit/scoring/tagging_report.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "toolkit/core/json_text.h"
#include "toolkit/scoring/report_format.h"

namespace csan::scoring {

namespace {

// A count as {"score": its percentage rounded to --width decimals, "correct", "total"}.
nlohmann::ordered_json count_json(const Count& c, int width) {
  return {{"score", round_to_width(c.percent(), width)}, {"correct", c.correct}, {"total", c.total}};
}

std::string pad(const std::string& s, size_t width, bool right = false) {
  if (s.size() >= width) return s;
  return right ? std::string(width - s.size(), ' ') + s : s + std::string(width - s.size(), ' ');
}

// "93.56", with the bootstrap's "(μ = 93.50 ± 0.40)" and p-value "(p = 0.0010)*" when paired.
std::string text_cell(const SystemScores& system, size_t metric, bool baseline, int width) {
  std::string cell = format_fixed(system.accuracies[metric].second.percent(), width);
  if (system.paired.empty()) return cell;
  const PairedResult& r = system.paired[metric];
  if (r.mean && r.ci) cell += " (μ = " + format_fixed(*r.mean, width) + " ± " + format_fixed(*r.ci, width) + ")";
  if (!baseline && r.p_value) cell += " (p = " + format_fixed(*r.p_value, 4) + ")" + (*r.p_value < 0.05 ? "*" : " ");
  return cell;
}

}  // namespace

std::string tagging_report_json(const TaggingScores& s, int width) {
  nlohmann::ordered_json report = {{"reference", s.reference}, {"tag_column", s.tag_column}, {"words", s.words}};
  if (s.classes) {
    report["oov_words"] = s.oov_words;
    report["oov_definition"] = "form not in " + s.oov_source;
    report["ambiguous_words"] = s.ambiguous_words;
    report["ambiguous_definition"] = "not OOV, 2+ tags in the training data";
  }
  if (s.paired) {
    report["paired_bs_n"] = s.paired_bs_n;
    report["seed"] = s.seed;
  }
  auto& systems = report["systems"] = nlohmann::ordered_json::array();
  for (size_t i = 0; i < s.systems.size(); ++i) {
    const SystemScores& system = s.systems[i];
    nlohmann::ordered_json entry = {{"name", system.name}};
    if (s.paired && i == 0) entry["baseline"] = true;
    for (size_t m = 0; m < system.accuracies.size(); ++m) {
      const auto& [name, count] = system.accuracies[m];
      auto& accuracy = entry[name] = count_json(count, width);
      if (system.paired.empty()) continue;
      const PairedResult& r = system.paired[m];
      if (r.mean) accuracy["mean"] = round_to_width(*r.mean, width);
      if (r.ci) accuracy["ci"] = round_to_width(*r.ci, width);
      if (r.p_value) accuracy["p_value"] = round_to_width(*r.p_value, 4);
    }
    auto& recall = entry["tag_recall"] = nlohmann::ordered_json::object();
    for (const auto& [tag, count] : system.tag_recall) recall[tag] = count_json(count, width);
    systems.push_back(std::move(entry));
  }
  return core::json_text(report) + "\n";
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
      out += "  " + pad(format_fixed(system.tag_recall.at(tag).percent(), width),
                        std::max<size_t>(7, system.name.size()), true);
    out += "\n";
  }
  return out;
}

}  // namespace csan::scoring
