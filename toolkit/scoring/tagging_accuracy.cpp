#include "toolkit/scoring/tagging_accuracy.h"

#include "toolkit/core/error.h"

namespace csan::scoring {

namespace {

std::vector<std::string> split_tabs(const std::string& joined) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t tab = joined.find('\t', start);
    out.push_back(joined.substr(start, tab == std::string::npos ? std::string::npos : tab - start));
    if (tab == std::string::npos) return out;
    start = tab + 1;
  }
}

std::string joined(const std::vector<std::string>& tags) {
  std::string out;
  for (size_t i = 0; i < tags.size(); ++i) out += (i ? "\t" : "") + tags[i];
  return out;
}

std::string where(const TaggedText& text, size_t sentence) {
  const long line = sentence < text.first_lines.size() ? text.first_lines[sentence] : 0;
  return line > 0 ? text.origin + ":" + std::to_string(line) : text.origin;
}

// The system must tag the reference's words: same sentences, same forms.
void check_aligned(const TaggedText& reference, const TaggedText& system) {
  if (system.forms.size() != reference.forms.size())
    throw Error(system.origin + ": " + std::to_string(system.forms.size()) + " sentences, but the reference " +
                reference.origin + " has " + std::to_string(reference.forms.size()));
  for (size_t s = 0; s < reference.forms.size(); ++s) {
    const auto& ref = reference.forms[s];
    const auto& sys = system.forms[s];
    if (sys.size() != ref.size())
      throw Error(where(system, s) + ": sentence " + std::to_string(s + 1) + " has " + std::to_string(sys.size()) +
                  " words, the reference's (" + where(reference, s) + ") " + std::to_string(ref.size()));
    for (size_t w = 0; w < ref.size(); ++w)
      if (sys[w] != ref[w])
        throw Error(where(system, s) + ": word " + std::to_string(w + 1) + " of sentence " + std::to_string(s + 1) +
                    " is '" + sys[w] + "', the reference's is '" + ref[w] + "' (not the same text)");
  }
}

}  // namespace

bool WordClasses::oov(const std::string& form) const {
  return vocabulary ? vocabulary->count(form) == 0 : training_tags.count(form) == 0;
}

bool WordClasses::ambiguous(const std::string& form) const {
  if (oov(form)) return false;
  auto it = training_tags.find(form);
  return it != training_tags.end() && it->second.size() >= 2;
}

WordClasses WordClasses::from_training(const TaggedText& train) {
  WordClasses classes;
  for (size_t s = 0; s < train.forms.size(); ++s)
    for (size_t w = 0; w < train.forms[s].size(); ++w) classes.training_tags[train.forms[s][w]].insert(train.tags[s][w]);
  classes.oov_source = train.origin;
  return classes;
}

TaggingAccuracy::TaggingAccuracy(std::string name, std::vector<std::vector<bool>> counted)
    : name_(std::move(name)), counted_(std::move(counted)) {}

std::vector<Stats> TaggingAccuracy::segment_stats(const std::vector<std::string>& hyps,
                                                  const std::vector<std::vector<std::string>>& refs) const {
  if (refs.size() != 1 || refs[0].size() != hyps.size() || hyps.size() != counted_.size())
    throw Error("tagging accuracy: one reference per sentence and the sentences it was built for");
  std::vector<Stats> out;
  out.reserve(hyps.size());
  for (size_t s = 0; s < hyps.size(); ++s) {
    const auto hyp = split_tabs(hyps[s]), ref = split_tabs(refs[0][s]);
    if (hyp.size() != counted_[s].size() || ref.size() != counted_[s].size())
      throw Error("tagging accuracy: sentence " + std::to_string(s + 1) + " has another number of words");
    double correct = 0, total = 0;
    for (size_t w = 0; w < hyp.size(); ++w) {
      if (!counted_[s][w]) continue;
      total += 1;
      correct += hyp[w] == ref[w];
    }
    out.push_back({correct, total});
  }
  return out;
}

double TaggingAccuracy::score(const Stats& sum) const { return sum[1] > 0 ? 100.0 * sum[0] / sum[1] : 0.0; }

double TaggingAccuracy::score_float32(const std::vector<float>& sum) const {
  return sum[1] > 0 ? 100.0 * double(sum[0]) / double(sum[1]) : 0.0;
}

TaggingScores score_tagging(const TaggedText& reference, const std::vector<TaggedText>& systems,
                            const TaggingScoreSettings& settings) {
  if (systems.empty()) throw Error("no system to score (give -i SYSTEM.conllu ...)");
  if (settings.paired_bs && systems.size() < 2)
    throw Error("--paired-bs compares systems: give a baseline and at least one system (-i BASE.conllu SYS.conllu)");
  for (const auto& system : systems) check_aligned(reference, system);

  TaggingScores scores;
  scores.reference = reference.origin;
  scores.tag_column = settings.tag_column;
  scores.classes = settings.classes.has_value();
  if (scores.classes) scores.oov_source = settings.classes->oov_source;

  // Which words each accuracy counts.
  std::vector<std::pair<std::string, std::vector<std::vector<bool>>>> subsets(1);
  subsets[0].first = "accuracy";
  if (scores.classes) subsets.push_back({"oov_accuracy", {}}), subsets.push_back({"ambiguous_accuracy", {}});
  for (size_t s = 0; s < reference.forms.size(); ++s) {
    for (auto& subset : subsets) subset.second.emplace_back();
    for (const auto& form : reference.forms[s]) {
      ++scores.words;
      subsets[0].second.back().push_back(true);
      if (!scores.classes) continue;
      const bool oov = settings.classes->oov(form), ambiguous = settings.classes->ambiguous(form);
      scores.oov_words += oov;
      scores.ambiguous_words += ambiguous;
      subsets[1].second.back().push_back(oov);
      subsets[2].second.back().push_back(ambiguous);
    }
  }
  std::vector<TaggingAccuracy> metrics;
  for (auto& [name, counted] : subsets) metrics.emplace_back(name, std::move(counted));

  std::vector<std::vector<std::string>> refs(1);
  for (const auto& tags : reference.tags) refs[0].push_back(joined(tags));
  std::vector<std::vector<std::vector<Stats>>> stats;  // [system][metric][sentence]
  for (const auto& system : systems) {
    SystemScores result;
    result.name = system.origin;
    std::vector<std::string> hyps;
    for (const auto& tags : system.tags) hyps.push_back(joined(tags));
    stats.emplace_back();
    for (const auto& metric : metrics) {
      stats.back().push_back(metric.segment_stats(hyps, refs));
      const Stats sum = sum_stats(stats.back().back());
      result.accuracies.push_back({metric.name(), {long(sum[0]), long(sum[1])}});
    }
    for (size_t s = 0; s < reference.tags.size(); ++s)
      for (size_t w = 0; w < reference.tags[s].size(); ++w) {
        Count& count = result.tag_recall[reference.tags[s][w]];
        ++count.total;
        count.correct += system.tags[s][w] == reference.tags[s][w];
      }
    scores.systems.push_back(std::move(result));
  }
  if (settings.paired_bs) {
    std::vector<const Metric*> pointers;
    for (const auto& metric : metrics) pointers.push_back(&metric);
    const auto paired = paired_bootstrap(pointers, stats, static_cast<size_t>(settings.paired_bs_n), settings.seed);
    for (size_t s = 0; s < systems.size(); ++s) scores.systems[s].paired = paired[s];
    scores.paired = true;
    scores.paired_bs_n = settings.paired_bs_n;
    scores.seed = settings.seed.paired_text();
  }
  return scores;
}

}  // namespace csan::scoring
