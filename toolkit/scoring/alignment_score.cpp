#include "toolkit/scoring/alignment_score.h"

#include <cstdio>
#include <sstream>

#include "toolkit/core/error.h"

namespace csan::scoring {

namespace {

int64_t word_count(const std::string& text) {
  std::istringstream in(text);
  int64_t n = 0;
  for (std::string w; in >> w;) ++n;
  return n;
}

std::string figures(const char* name, const AlignmentCounts& c) {
  char buffer[256];
  std::snprintf(buffer, sizeof buffer,
                "%s precision %.4f recall %.4f F1 %.4f (matched %lld, predicted %lld, true %lld)", name, c.precision(),
                c.recall(), c.f1(), static_cast<long long>(c.matched), static_cast<long long>(c.predicted),
                static_cast<long long>(c.truth));
  return buffer;
}

}  // namespace

AlignmentPairs parse_pharaoh(const std::string& line, const std::string& where) {
  AlignmentPairs pairs;
  std::istringstream in(line);
  for (std::string pair; in >> pair;) {
    const auto dash = pair.find('-');
    size_t used_source = 0, used_target = 0;
    try {
      if (dash == std::string::npos) throw std::invalid_argument("no dash");
      const std::string source = pair.substr(0, dash), target = pair.substr(dash + 1);
      const long long s = std::stoll(source, &used_source), t = std::stoll(target, &used_target);
      if (used_source != source.size() || used_target != target.size() || s < 0 || t < 0)
        throw std::invalid_argument("not two numbers");
      pairs.emplace(s, t);
    } catch (const std::exception&) {
      throw Error(where + ": '" + pair + "' is not a source-target pair i-j");
    }
  }
  return pairs;
}

AlignmentPairs diagonal_alignment(int64_t source_words, int64_t target_words) {
  AlignmentPairs pairs;
  if (source_words <= 0) return pairs;
  for (int64_t j = 0; j < target_words; ++j)
    pairs.emplace(static_cast<int64_t>((double(j) + 0.5) * double(source_words) / double(target_words)), j);
  return pairs;
}

void AlignmentCounts::add(const AlignmentPairs& predicted_pairs, const AlignmentPairs& true_pairs) {
  for (const auto& p : predicted_pairs) matched += true_pairs.count(p);
  predicted += static_cast<int64_t>(predicted_pairs.size());
  truth += static_cast<int64_t>(true_pairs.size());
}

double AlignmentCounts::f1() const {
  const double p = precision(), r = recall();
  return p + r > 0 ? 2 * p * r / (p + r) : 0.0;
}

std::map<int64_t, GeneratedSentence> parse_generate_output(const std::vector<std::string>& lines,
                                                           const std::string& origin) {
  std::map<int64_t, GeneratedSentence> sentences;
  for (size_t n = 0; n < lines.size(); ++n) {
    const std::string& line = lines[n];
    const auto tab = line.find('\t');
    if (line.size() < 3 || line[1] != '-' || tab == std::string::npos) continue;  // summary lines
    const char kind = line[0];
    if (kind != 'S' && kind != 'T' && kind != 'D' && kind != 'A') continue;
    int64_t id = 0;
    try {
      size_t used = 0;
      id = std::stoll(line.substr(2, tab - 2), &used);
      if (used != tab - 2) throw std::invalid_argument("id");
    } catch (const std::exception&) {
      throw Error::at(origin, static_cast<long>(n + 1), "'" + line.substr(0, tab) + "' has no sentence number");
    }
    GeneratedSentence& s = sentences[id];
    std::string rest = line.substr(tab + 1);
    if (kind == 'S') s.source = rest;
    if (kind == 'T') s.reference = rest;
    if (kind == 'D' && s.hypothesis.empty()) s.hypothesis = rest.substr(rest.find('\t') + 1);  // after the score
    if (kind == 'A' && !s.has_alignment) s.alignment = rest, s.has_alignment = true;
  }
  return sentences;
}

AlignmentReport score_alignments(const std::map<int64_t, GeneratedSentence>& generated,
                                 const std::vector<std::string>& truth, const std::string& generate_origin,
                                 const std::string& truth_origin) {
  AlignmentReport report;
  for (const auto& [id, s] : generated) {
    if (!s.has_alignment)
      throw Error(generate_origin + ": sentence " + std::to_string(id) +
                  " has no A- line (translate with csan-generate --print-alignment)");
    if (id < 0 || id >= static_cast<int64_t>(truth.size()))
      throw Error(truth_origin + ": has " + std::to_string(truth.size()) + " lines, no truth for sentence " +
                  std::to_string(id) + " of " + generate_origin);
    if (s.hypothesis != s.reference) {
      ++report.skipped;
      continue;
    }
    ++report.compared;
    const AlignmentPairs true_pairs = parse_pharaoh(truth[id], truth_origin + ":" + std::to_string(id + 1));
    report.model.add(parse_pharaoh(s.alignment, generate_origin + ": A-" + std::to_string(id)), true_pairs);
    report.diagonal.add(diagonal_alignment(word_count(s.source), word_count(s.reference)), true_pairs);
  }
  report.lines.push_back("sentences: " + std::to_string(report.compared) + " compared (hypothesis = reference), " +
                         std::to_string(report.skipped) + " skipped");
  report.lines.push_back(figures("alignment:", report.model));
  report.lines.push_back(figures("diagonal: ", report.diagonal));
  return report;
}

}  // namespace csan::scoring
