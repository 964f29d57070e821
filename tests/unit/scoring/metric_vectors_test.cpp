// Every api_corpus and api_sentence entry of the sacreBLEU vectors: scores to full
// precision, BLEU's counts/totals/precisions/bp/lengths, chrF/TER summed statistics,
// signatures (built from signature_fields) and the text lines at widths 1 and 3.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <memory>

#include "sacrebleu_vectors.h"
#include "toolkit/scoring/bleu.h"
#include "toolkit/scoring/chrf.h"
#include "toolkit/scoring/ter.h"

namespace csan::scoring {
namespace {

struct MetricSetup {
  std::string metric;  // bleu, chrf, ter
  BleuOptions bleu;
  ChrfOptions chrf;
  TerOptions ter;
  std::vector<std::string> ref_files;
  std::string hyp_file;
};

// The options of a sacreBLEU command line as given in the vectors' cli_args.
MetricSetup parse_cli_args(const std::vector<std::string>& args) {
  MetricSetup setup;
  size_t i = 0;
  while (i < args.size() && args[i] != "-i") setup.ref_files.push_back(args[i++]);
  for (++i; i < args.size(); ++i) {
    const std::string& arg = args[i];
    auto next = [&]() { return args.at(++i); };
    if (arg == "-m") setup.metric = next();
    else if (arg == "-lc") setup.bleu.lowercase = true;
    else if (arg == "-tok") setup.bleu.tokenize = next();
    else if (arg == "-s") setup.bleu.smooth_method = next();
    else if (arg == "-sv") setup.bleu.smooth_value = std::stod(next());
    else if (arg == "-cc") setup.chrf.char_order = std::stoi(next());
    else if (arg == "-cw") setup.chrf.word_order = std::stoi(next());
    else if (arg == "--chrf-beta") setup.chrf.beta = std::stoi(next());
    else if (arg == "--chrf-whitespace") setup.chrf.whitespace = true;
    else if (arg == "--chrf-lowercase") setup.chrf.lowercase = true;
    else if (arg == "--chrf-eps-smoothing") setup.chrf.eps_smoothing = true;
    else if (arg == "--ter-case-sensitive") setup.ter.case_sensitive = true;
    else if (arg == "--ter-normalized") setup.ter.normalized = true;
    else if (arg == "--ter-no-punct") setup.ter.no_punct = true;
    else if (arg == "--ter-asian-support") setup.ter.asian_support = true;
    else if (setup.hyp_file.empty() && arg[0] != '-') setup.hyp_file = arg;
    else throw std::runtime_error("unexpected cli arg in vectors: " + arg);
  }
  return setup;
}

std::unique_ptr<Metric> make_metric(const MetricSetup& setup, bool sentence_level) {
  if (setup.metric == "bleu") {
    BleuOptions options = setup.bleu;
    options.effective_order = sentence_level;  // the CLI forces it for -sl
    return std::make_unique<Bleu>(options);
  }
  if (setup.metric == "chrf") return std::make_unique<Chrf>(setup.chrf);
  if (setup.metric == "ter") return std::make_unique<Ter>(setup.ter);
  throw std::runtime_error("unknown metric " + setup.metric);
}

std::string signature(const Metric& metric, size_t nrefs, bool short_form) {
  std::string text = std::string(short_form ? "#:" : "nrefs:") + std::to_string(nrefs);
  for (const SignatureField& field : metric.signature_fields()) {
    text += "|" + (short_form ? field.short_key : field.key) + ":" + field.value;
  }
  return text + (short_form ? "|v:2.6.0" : "|version:2.6.0");
}

std::string text_line(const Metric& metric, const Stats& sum, size_t nrefs, int width) {
  char score[64];
  std::snprintf(score, sizeof score, "%.*f", width, metric.score(sum));
  std::string line = metric.name() + "|" + signature(metric, nrefs, false) + " = " + score;
  std::string verbose = metric.verbose(sum);
  return verbose.empty() ? line : line + " " + verbose;
}

Stats sum_stats(const std::vector<Stats>& stats) {
  Stats sum;
  for (const Stats& segment : stats) {
    if (sum.empty()) sum.assign(segment.size(), 0.0);
    for (size_t k = 0; k < segment.size(); ++k) sum[k] += segment[k];
  }
  return sum;
}

std::vector<double> doubles(const nlohmann::json& values) {
  std::vector<double> out;
  for (const auto& v : values) out.push_back(v.get<double>());
  return out;
}

// Checks one expected entry against the statistics the metric produced.
void check_entry(const Metric& metric, const Stats& sum, size_t nrefs, const nlohmann::json& expected,
                 const std::string& where) {
  SCOPED_TRACE(where);
  EXPECT_EQ(metric.name(), expected["name"].get<std::string>());
  EXPECT_EQ(metric.score(sum), expected["score"].get<double>());
  EXPECT_EQ(signature(metric, nrefs, false), expected["signature"].get<std::string>());
  if (expected.contains("signature_short")) {
    EXPECT_EQ(signature(metric, nrefs, true), expected["signature_short"].get<std::string>());
  }
  EXPECT_EQ(text_line(metric, sum, nrefs, 1), expected["text_w1"].get<std::string>());
  if (expected.contains("text_w3")) {
    EXPECT_EQ(text_line(metric, sum, nrefs, 3), expected["text_w3"].get<std::string>());
  }
  if (auto* bleu = dynamic_cast<const Bleu*>(&metric)) {
    BleuResult result = bleu->compute(sum);
    EXPECT_EQ(std::vector<double>(result.counts.begin(), result.counts.end()), doubles(expected["counts"]));
    EXPECT_EQ(std::vector<double>(result.totals.begin(), result.totals.end()), doubles(expected["totals"]));
    EXPECT_EQ(std::vector<double>(result.precisions.begin(), result.precisions.end()),
              doubles(expected["precisions"]));
    EXPECT_EQ(result.bp, expected["bp"].get<double>());
    EXPECT_EQ(result.sys_len, expected["sys_len"].get<long long>());
    EXPECT_EQ(result.ref_len, expected["ref_len"].get<long long>());
    EXPECT_EQ(result.ratio, expected["ratio"].get<double>());
  }
  if (expected.contains("stats_sum")) {
    EXPECT_EQ(sum, doubles(expected["stats_sum"]));
  }
  if (auto* ter = dynamic_cast<const Ter*>(&metric)) {
    TerResult result = ter->compute(sum);
    EXPECT_EQ(static_cast<long long>(result.num_edits), expected["num_edits"].get<long long>());
    EXPECT_EQ(result.ref_length, expected["ref_length"].get<double>());
  }
}

const nlohmann::json& cases() {
  static const nlohmann::json json = testing::load_vectors("expected.json")["cases"];
  return json;
}

// One test per case, so a failure names the case.
class CorpusVectors : public ::testing::TestWithParam<std::string> {};

TEST_P(CorpusVectors, ApiCorpusEntriesMatch) {
  const nlohmann::json& c = cases()[GetParam()];
  const std::string dir = std::string(CSAN_SHARED_DIR) + "/vectors/sacrebleu/" + c["dir"].get<std::string>();
  std::map<std::string, std::vector<std::string>> files;
  auto lines = [&](const std::string& name) -> const std::vector<std::string>& {
    auto it = files.find(name);
    if (it == files.end()) it = files.emplace(name, testing::read_case_lines(dir + "/" + name, false)).first;
    return it->second;
  };
  ASSERT_FALSE(c["api_corpus"].empty());
  for (const auto& expected : c["api_corpus"]) {
    MetricSetup setup = parse_cli_args(expected["cli_args"].get<std::vector<std::string>>());
    std::vector<std::vector<std::string>> refs;
    for (const auto& file : setup.ref_files) refs.push_back(lines(file));
    auto metric = make_metric(setup, false);
    Stats sum = sum_stats(metric->segment_stats(lines(setup.hyp_file), refs));
    check_entry(*metric, sum, refs.size(), expected,
                GetParam() + " " + setup.hyp_file + " " + expected["config"].get<std::string>());
  }
}

TEST_P(CorpusVectors, ApiSentenceEntriesMatch) {
  const nlohmann::json& c = cases()[GetParam()];
  // Sentence entries name a config; its options are those of the corpus entry with the same config.
  std::map<std::string, MetricSetup> configs;
  for (const auto& entry : c["api_corpus"]) {
    configs.emplace(entry["config"].get<std::string>(),
                    parse_cli_args(entry["cli_args"].get<std::vector<std::string>>()));
  }
  for (const auto& expected : c["api_sentence"]) {
    const MetricSetup& setup = configs.at(expected["config"].get<std::string>());
    auto metric = make_metric(setup, true);
    std::vector<std::vector<std::string>> refs;
    for (const auto& ref : expected["refs"]) refs.push_back({ref.get<std::string>()});
    Stats sum = sum_stats(metric->segment_stats({expected["hyp"].get<std::string>()}, refs));
    check_entry(*metric, sum, refs.size(), expected,
                GetParam() + " line " + std::to_string(expected["line"].get<int>()) + " " +
                    expected["config"].get<std::string>());
  }
}

INSTANTIATE_TEST_SUITE_P(Sacrebleu, CorpusVectors,
                         ::testing::Values("de500", "en500", "multiref_de", "edge", "tiny", "zh_small"));

}  // namespace
}  // namespace csan::scoring
