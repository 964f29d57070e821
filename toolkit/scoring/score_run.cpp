#include "toolkit/scoring/score_run.h"

#include <algorithm>
#include <cstdlib>
#include <initializer_list>
#include <istream>
#include <iterator>
#include <memory>
#include <ostream>

#include "toolkit/core/error.h"
#include "toolkit/core/text_file.h"
#include "toolkit/core/utf8.h"
#include "toolkit/scoring/report.h"
#include "toolkit/scoring/report_table.h"
#include "toolkit/scoring/resampling.h"
#include "toolkit/scoring/unicode.h"

namespace csan::scoring {

namespace {

// sacreBLEU's logger: "sacreBLEU: " lines on stderr; with -q only warnings and errors,
// without the prefix (Python's last-resort handler).
class Log {
 public:
  Log(std::ostream& err, bool quiet) : err_(err), quiet_(quiet) {}
  void info(const std::string& message) const {
    if (!quiet_) err_ << "sacreBLEU: " << message << "\n";
  }
  void error(const std::string& message) const { err_ << (quiet_ ? "" : "sacreBLEU: ") << message << "\n"; }

 private:
  std::ostream& err_;
  bool quiet_;
};

// Python's repr() of a str, for the messages that quote a file name.
std::string python_str_repr(const std::string& s) {
  const bool has_single = s.find('\'') != std::string::npos;
  const bool has_double = s.find('"') != std::string::npos;
  const char quote = has_single && !has_double ? '"' : '\'';
  std::string out(1, quote);
  for (char c : s) {
    if (c == quote || c == '\\') out += '\\';
    out += c;
  }
  return out + quote;
}

// str.rstrip() with Python's whitespace set, on valid UTF-8.
void rstrip_in_place(std::string& line) {
  while (!line.empty()) {
    std::size_t start = line.size() - 1;
    while (start > 0 && (static_cast<unsigned char>(line[start]) & 0xC0) == 0x80) --start;
    const std::u32string last = utf8::decode(std::string_view(line).substr(start));
    if (last.size() != 1 || !is_space(last[0])) return;
    line.erase(start);
  }
}

std::vector<std::string> split_tabs(const std::string& line, std::size_t max_split) {
  std::vector<std::string> fields;
  std::size_t start = 0;
  while (true) {
    const std::size_t tab = fields.size() < max_split ? line.find('\t', start) : std::string::npos;
    if (tab == std::string::npos) {
      fields.push_back(line.substr(start));
      return fields;
    }
    fields.push_back(line.substr(start, tab - start));
    start = tab + 1;
  }
}

std::vector<std::string> read_rstripped(const std::string& path) {
  std::vector<std::string> lines = read_lines(path);
  for (auto& line : lines) rstrip_in_place(line);
  return lines;
}

// stdin is read with universal newlines (\r, \n and \r\n all end lines).
std::vector<std::string> read_stdin_lines(std::istream& in) {
  const std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < data.size()) {
    std::size_t end = data.find_first_of("\r\n", start);
    if (end == std::string::npos) end = data.size();
    lines.emplace_back(data, start, end - start);
    check_utf8_line("<stdin>", static_cast<long>(lines.size()), lines.back());
    start = end + 1;
    if (end < data.size() && data[end] == '\r' && start < data.size() && data[start] == '\n') ++start;
  }
  return lines;
}

constexpr int kExitFailure = 1;
constexpr int kExitFieldCount = 17;

// sacreBLEU refused the run: its message is on the log, score_run returns the exit code.
struct Refused {
  int exit_code;
};

[[noreturn]] void refuse(const Log& log, int exit_code, std::initializer_list<std::string> lines) {
  for (const auto& line : lines) log.error(line);
  throw Refused{exit_code};
}

struct MetricEntry {
  std::string key;  // BLEU, CHRF, TER: sacreBLEU's dict key (sorted order)
  std::unique_ptr<Metric> metric;
};

// What a run scores: refs[r][i] is reference stream r, segment i; systems[s] the
// segments of the system named names[s].
struct Inputs {
  std::vector<std::vector<std::string>> refs;
  std::vector<std::vector<std::string>> systems;
  std::vector<std::string> names;
};

bool is_paired(const ScoreOptions& options) { return options.paired_bs || options.paired_ar; }

// SACREBLEU_FORMAT, when it names a format, overrides --format.
std::string effective_format(const ScoreOptions& options, const ScoreEnvironment& env) {
  if (!env.format) return options.format;
  std::string wanted = *env.format;
  std::transform(wanted.begin(), wanted.end(), wanted.begin(), [](unsigned char c) { return std::tolower(c); });
  return wanted == "json" || wanted == "text" || wanted == "latex" ? wanted : options.format;
}

// The checks sacreBLEU makes before it reads a file.
void check_arguments(const ScoreOptions& options, const Log& log) {
  if (options.sentence_level && options.metrics.size() > 1)
    refuse(log, kExitFailure, {"Only one metric can be used in sentence-level mode."});
  if (options.num_refs != 1 && options.refs.size() > 1)
    refuse(log, kExitFailure,
           {"The --num-refs argument allows you to provide any number of tab-delimited references in a single file.",
            "You can only use it with externally provided references, however (i.e., not with `-t`),",
            "and you cannot then provide multiple reference files."});
  if (options.refs.empty())
    refuse(log, kExitFailure,
           {"If manual references given, make sure to provide them before the -i/--input argument to avoid confusion.",
            "Otherwise, I need a predefined test set (-t) from the following list:",
            "['wmt24', 'wmt23', 'wmt22', 'wmt21/systems', 'wmt21/dev', 'wmt21/D', 'wmt21/C', 'wmt21/B', 'wmt21/AC', "
            "'wmt21/AB', 'wmt21', 'wmt20/tworefs', 'wmt20/robust/set3', 'wmt20/robust/set2', 'wmt20/robust/set1', "
            "'wmt20/dev', 'wmt20', 'wmt19/google/wmtp', 'wmt19/google/hqr', 'wmt19/google/hqp', 'wmt19/google/hqall', "
            "'wmt19/google/arp', 'wmt19/google/ar', 'wmt19/dev', 'wmt19', 'wmt18/test-ts', 'wmt18/dev', 'wmt18', "
            "'wmt17/tworefs', 'wmt17/ms', 'wmt17/improved', 'wmt17/dev', 'wmt17/B', 'wmt17', 'wmt16/tworefs', "
            "'wmt16/dev', 'wmt16/B', 'wmt16', 'wmt15', 'wmt14/full', 'wmt14', 'wmt13', 'wmt12', 'wmt11', 'wmt10', "
            "'wmt09', 'wmt08/nc', 'wmt08/europarl', 'wmt08', 'multi30k/2018', 'multi30k/2017', 'multi30k/2016', "
            "'mtnt2019', 'mtnt1.1/valid', 'mtnt1.1/train', 'mtnt1.1/test', 'mtedx/valid', 'mtedx/test', "
            "'iwslt17/tst2016', 'iwslt17/tst2015', 'iwslt17/tst2014', 'iwslt17/tst2013', 'iwslt17/tst2012', "
            "'iwslt17/tst2011', 'iwslt17/tst2010', 'iwslt17/dev2010', 'iwslt17']"});
}

// The reference files; with --num-refs N, N tab-separated references per line of one file.
std::vector<std::vector<std::string>> read_references(const ScoreOptions& options, const Log& log) {
  const std::size_t n_streams = std::max<std::size_t>(options.refs.size(), std::max(options.num_refs, 1));
  std::vector<std::vector<std::string>> refs(n_streams);
  for (std::size_t r = 0; r < options.refs.size(); ++r) {
    std::vector<std::string> lines = read_rstripped(options.refs[r]);
    if (options.num_refs == 1) {
      refs[r] = std::move(lines);
      continue;
    }
    const std::size_t max_split =
        options.num_refs > 0 ? static_cast<std::size_t>(options.num_refs - 1) : std::string::npos;
    for (std::size_t i = 0; i < lines.size(); ++i) {
      std::vector<std::string> fields = split_tabs(lines[i], max_split);
      if (static_cast<long>(fields.size()) != options.num_refs)
        refuse(log, kExitFieldCount,
               {"FATAL: line " + std::to_string(i + 1) + ": expected " + std::to_string(options.num_refs) +
                " fields, but found " + std::to_string(fields.size()) + "."});
      for (std::size_t f = 0; f < fields.size(); ++f) refs[f].push_back(std::move(fields[f]));
    }
  }
  return refs;
}

// The systems of stdin: one per tab-separated field, named "System 1", "System 2", ...
void read_stdin_systems(std::istream& in, const Log& log, Inputs& inputs) {
  const std::vector<std::string> lines = read_stdin_lines(in);
  std::string first = lines.empty() ? "" : lines[0];
  rstrip_in_place(first);
  for (auto& field : split_tabs(first, std::string::npos)) inputs.systems.push_back({field});
  for (std::size_t i = 0; i < inputs.systems.size(); ++i) inputs.names.push_back("System " + std::to_string(i + 1));
  for (std::size_t l = 1; l < lines.size(); ++l) {
    std::string line = lines[l];
    rstrip_in_place(line);
    std::vector<std::string> fields = split_tabs(line, std::string::npos);
    if (fields.size() != inputs.systems.size())
      refuse(log, kExitFieldCount,
             {"FATAL: the number of tab-delimited fields in the input stream differ across lines."});
    for (std::size_t s = 0; s < fields.size(); ++s) {
      rstrip_in_place(fields[s]);
      inputs.systems[s].push_back(std::move(fields[s]));
    }
  }
}

// The systems of -i files, named by their paths (a paired test's baseline given twice is read once).
void read_system_files(const ScoreOptions& options, const Log& log, Inputs& inputs) {
  for (const auto& file : *options.inputs) {
    if (std::find(inputs.names.begin(), inputs.names.end(), file) != inputs.names.end()) {
      if (is_paired(options) && file == inputs.names[0]) {
        log.info("Ignoring " + python_str_repr(file) + " as it was also given as the baseline.");
        continue;
      }
      refuse(log, kExitFailure,
             {python_str_repr(file) + " already used to name a system.",
              "Make sure to have a different basename for each system."});
    }
    inputs.systems.push_back(read_rstripped(file));
    inputs.names.push_back(file);
  }
}

// A paired test names its first system the baseline.
void name_baseline(const ScoreOptions& options, Inputs& inputs) {
  if (!is_paired(options) || inputs.systems.empty()) return;
  if (!options.inputs) {
    inputs.names[0] = "Baseline";
    for (std::size_t s = 1; s < inputs.systems.size(); ++s) inputs.names[s] = "System " + std::to_string(s);
  } else {
    inputs.names[0] = "Baseline: " + inputs.names[0];
  }
}

Inputs read_inputs(const ScoreOptions& options, std::istream& in, const Log& log) {
  Inputs inputs;
  inputs.refs = read_references(options, log);
  if (options.inputs) {
    read_system_files(options, log, inputs);
  } else {
    read_stdin_systems(in, log, inputs);
  }
  name_baseline(options, inputs);
  return inputs;
}

// The checks sacreBLEU makes on what it read, in its order.
void check_inputs(const ScoreOptions& options, const Inputs& inputs, const Log& log) {
  const std::size_t n_systems = inputs.systems.size();
  if (options.sentence_level) {
    if (n_systems > 1) refuse(log, kExitFailure, {"Only one system can be evaluated in sentence-level mode."});
    if (options.confidence || is_paired(options))
      refuse(log, kExitFailure, {"Statistical tests are unavailable in sentence-level mode."});
  }
  if (is_paired(options) && n_systems == 1)
    refuse(log, kExitFailure, {"Paired tests require multiple input systems given to --input (-i)."});
  if (n_systems > 1 && options.confidence)
    refuse(log, kExitFailure, {"Use paired tests (--paired) for multiple systems."});
  for (const auto& system : inputs.systems) {
    if (system.empty()) refuse(log, kExitFailure, {"Test set None contains no sentence"});
    for (const auto& stream : inputs.refs)
      if (stream.size() != system.size())
        refuse(log, kExitFailure, {"System and reference streams have different lengths."});
  }
}

std::string default_model_path(const std::string& tokenize, const ScoreEnvironment& env) {
  std::string base = env.model_dir ? *env.model_dir : (env.home ? *env.home : std::string(".")) + "/.sacrebleu";
  const std::string file = tokenize == "flores200" ? "flores200sacrebleuspm" : "sacrebleu_tokenizer_spm.model";
  return base + "/models/" + file;
}

// The metrics in sacreBLEU's order: command-line order for paired tests, by name otherwise.
std::vector<MetricEntry> build_metrics(const ScoreOptions& options, const ScoreEnvironment& env) {
  BleuOptions bleu = options.bleu;
  if (options.sentence_level) bleu.effective_order = true;
  if ((bleu.tokenize == "spm" || bleu.tokenize == "flores101" || bleu.tokenize == "flores200") &&
      bleu.spm_model.empty())
    bleu.spm_model = default_model_path(bleu.tokenize, env);
  std::vector<MetricEntry> metrics;
  for (const auto& name : options.metrics) {
    std::string key = name;
    std::transform(key.begin(), key.end(), key.begin(), [](unsigned char c) { return std::toupper(c); });
    if (std::any_of(metrics.begin(), metrics.end(), [&](const MetricEntry& e) { return e.key == key; })) continue;
    if (key == "BLEU")
      metrics.push_back({key, make_bleu(bleu)});
    else if (key == "CHRF")
      metrics.push_back({key, make_chrf(options.chrf)});
    else if (key == "TER")
      metrics.push_back({key, make_ter(options.ter)});
    else
      throw Error("unknown metric '" + name + "' (choose from bleu, chrf, ter)");
  }
  if (!is_paired(options))
    std::sort(metrics.begin(), metrics.end(), [](const MetricEntry& a, const MetricEntry& b) { return a.key < b.key; });
  return metrics;
}

// Per-segment statistics, with BLEU's warning about tokenized input (sacreBLEU scores
// sentence-level lines one at a time, so it never warns there).
std::vector<Stats> extract_stats(const MetricEntry& entry, const ScoreOptions& options,
                                 const std::vector<std::string>& system,
                                 const std::vector<std::vector<std::string>>& refs, const Log& log) {
  if (entry.key == "BLEU" && !options.bleu.force && !options.sentence_level) {
    const auto tokenized = std::count_if(system.begin(), system.end(), [](const std::string& line) {
      return line.size() >= 2 && line.compare(line.size() - 2, 2, " .") == 0;
    });
    if (tokenized >= 100) {
      log.error("That's 100 lines that end in a tokenized period ('.')");
      log.error("It looks like you forgot to detokenize your test data, which may hurt your score.");
      log.error(
          "If you insist your data is detokenized, or don't care, you can suppress this message with the `force` "
          "parameter.");
    }
  }
  return entry.metric->segment_stats(system, refs);
}

int resampling_threads(const ScoreOptions& options) { return options.paired_jobs > 1 ? options.paired_jobs : 0; }

// Values sacreBLEU accepts stay accepted with its meaning (a count of 0 or less: the
// default; -cin 1 or less: no interval). These are the ones it crashes on (a negative
// -j reaches multiprocessing.Pool) or that would run for hours.
void check_limits(const ScoreOptions& options) {
  if (is_paired(options) && options.paired_jobs < 0)
    throw Error("--paired-jobs/-j: expected 0 (one worker per system) or a positive number of threads, got " +
                std::to_string(options.paired_jobs));
  auto check_count = [](const char* option, int value) {
    if (value > 0 && static_cast<std::size_t>(value) > kMaxResamples)
      throw Error(std::string(option) + ": at most " + std::to_string(kMaxResamples) + " (got " +
                  std::to_string(value) + ")");
  };
  if (options.confidence) check_count("--confidence-n/-cin", options.confidence_n);
  if (options.paired_bs) check_count("--paired-bs-n/-pbsn", options.paired_bs_n);
  if (options.paired_ar) check_count("--paired-ar-n/-parn", options.paired_ar_n);
}

// What scoring shares: the options, the log, the signature fields every metric has and
// the seed (like sacreBLEU, SACREBLEU_SEED is only read when something is resampled).
struct Scoring {
  const ScoreOptions& options;
  const ScoreEnvironment& env;
  const Log& log;
  CommonSignature common;

  ResamplingSeed seed() const { return ResamplingSeed::parse(env.seed.value_or("12345")); }
  std::string signature(const Metric& metric, const CommonSignature& fields, bool short_form) const {
    return format_signature(make_signature(metric, fields), short_form);
  }
};

// -sl: one score line per segment of the one system with the one metric.
std::string score_sentences(const Scoring& s, const MetricEntry& entry, const Inputs& inputs) {
  const std::string signature = s.signature(*entry.metric, s.common, s.options.short_signature);
  std::string text;
  for (const auto& segment : extract_stats(entry, s.options, inputs.systems[0], inputs.refs, s.log)) {
    const ScoreReport report{entry.metric->name(), entry.metric->score(segment), std::nullopt,
                             entry.metric->verbose(segment)};
    text += format_score(report, s.options.width, s.options.score_only, signature, false) + "\n";
  }
  return text;
}

// One system: each metric's corpus score, with its bootstrap confidence interval under -ci.
std::string score_one_system(const Scoring& s, const std::vector<MetricEntry>& metrics, const Inputs& inputs,
                             bool json) {
  std::vector<std::string> results;
  for (const auto& entry : metrics) {
    const std::vector<Stats> stats = extract_stats(entry, s.options, inputs.systems[0], inputs.refs, s.log);
    const Stats sum = sum_stats(stats);
    ScoreReport report{entry.metric->name(), entry.metric->score(sum), std::nullopt, entry.metric->verbose(sum)};
    CommonSignature fields = s.common;
    if (s.options.confidence && s.options.confidence_n > 1) {
      report.confidence = bootstrap_confidence(*entry.metric, stats, static_cast<std::size_t>(s.options.confidence_n),
                                               s.seed().value, resampling_threads(s.options));
      fields.bootstrap = std::to_string(s.options.confidence_n);
      fields.seed = s.seed().text;
    }
    const std::string signature = s.signature(*entry.metric, fields, s.options.short_signature && !json);
    results.push_back(format_score(report, s.options.width, s.options.score_only, signature, json));
  }
  return single_system_output(results, json);
}

MultiSystemReport empty_report(const std::vector<MetricEntry>& metrics, const Inputs& inputs) {
  MultiSystemReport report;
  report.system_names = inputs.names;
  for (const auto& entry : metrics) report.metric_names.push_back(entry.metric->name());
  return report;
}

// Several systems without a test: every system's corpus score with every metric.
MultiSystemReport score_systems(const Scoring& s, const std::vector<MetricEntry>& metrics, const Inputs& inputs) {
  MultiSystemReport report = empty_report(metrics, inputs);
  report.results.assign(inputs.systems.size(), std::vector<PairedResult>(metrics.size()));
  for (std::size_t sys = 0; sys < inputs.systems.size(); ++sys)
    for (std::size_t m = 0; m < metrics.size(); ++m) {
      const Stats sum = sum_stats(extract_stats(metrics[m], s.options, inputs.systems[sys], inputs.refs, s.log));
      report.results[sys][m].score = metrics[m].metric->score(sum);
    }
  for (const auto& entry : metrics)
    report.signatures.push_back(s.signature(*entry.metric, s.common, s.options.short_signature));
  return report;
}

// -pbs / -par: every system against the baseline (the first), with sacreBLEU's log lines.
MultiSystemReport paired_significance(const Scoring& s, const std::vector<MetricEntry>& metrics, const Inputs& inputs) {
  const ScoreOptions& options = s.options;
  const bool bootstrap = options.paired_bs;
  const int requested = bootstrap ? options.paired_bs_n : options.paired_ar_n;
  const std::size_t n_samples = requested > 0 ? static_cast<std::size_t>(requested) : (bootstrap ? 1000 : 10000);
  std::vector<const Metric*> metric_list;
  for (const auto& entry : metrics) metric_list.push_back(entry.metric.get());
  const std::size_t n_systems = inputs.systems.size();
  std::vector<std::vector<std::vector<Stats>>> stats(n_systems);
  for (const auto& entry : metrics) {
    s.log.info("Pre-computing " + entry.key + " statistics for " + python_str_repr(inputs.names[0]));
    stats[0].push_back(extract_stats(entry, options, inputs.systems[0], inputs.refs, s.log));
  }
  const char* test_message = bootstrap ? " > Performing paired bootstrap resampling test (# resamples: "
                                       : " > Performing approximate randomization test (# trials: ";
  for (std::size_t sys = 1; sys < n_systems; ++sys)
    for (const auto& entry : metrics) {
      s.log.info("Computing " + entry.metric->name() + " for " + python_str_repr(inputs.names[sys]) +
                 " and extracting sufficient statistics");
      stats[sys].push_back(extract_stats(entry, options, inputs.systems[sys], inputs.refs, s.log));
      s.log.info(test_message + std::to_string(n_samples) + ")");
    }
  const ResamplingSeed paired_seed = s.seed();
  MultiSystemReport report = empty_report(metrics, inputs);
  report.results = bootstrap ? paired_bootstrap(metric_list, stats, n_samples, paired_seed, resampling_threads(options))
                             : paired_approximate_randomization(metric_list, stats, n_samples, paired_seed,
                                                                resampling_threads(options));
  report.test = bootstrap ? PairedTestKind::bootstrap : PairedTestKind::approximate_randomization;
  // The explanation quotes the option as given; the signature the count actually used.
  report.n_samples = requested;
  CommonSignature fields = s.common;
  (bootstrap ? fields.bootstrap : fields.randomization) = std::to_string(n_samples);
  fields.seed = paired_seed.paired_text();
  for (const auto& entry : metrics)
    report.signatures.push_back(s.signature(*entry.metric, fields, options.short_signature));
  return report;
}

// The scores in the output sacreBLEU prints for this kind of run.
std::string report(const Scoring& s, const std::vector<MetricEntry>& metrics, const Inputs& inputs,
                   const std::string& format) {
  if (s.options.sentence_level) return score_sentences(s, metrics.front(), inputs);
  if (inputs.systems.size() == 1) return score_one_system(s, metrics, inputs, format == "json");
  s.log.info("Found " + std::to_string(inputs.systems.size()) + " systems.");
  const MultiSystemReport table =
      is_paired(s.options) ? paired_significance(s, metrics, inputs) : score_systems(s, metrics, inputs);
  return multi_system_output(table, format, s.options.width);
}

}  // namespace

ScoreEnvironment ScoreEnvironment::from_process() {
  ScoreEnvironment env;
  auto get = [](const char* name) -> std::optional<std::string> {
    const char* value = std::getenv(name);
    return value ? std::optional<std::string>(value) : std::nullopt;
  };
  env.seed = get("SACREBLEU_SEED");
  env.format = get("SACREBLEU_FORMAT");
  env.model_dir = get("SACREBLEU");
  env.home = get("HOME");
  return env;
}

int score_run(const ScoreOptions& options, std::istream& in, std::ostream& out, std::ostream& err,
              const ScoreEnvironment& env) {
  check_limits(options);
  const Log log(err, options.quiet);
  try {
    check_arguments(options, log);
    const Inputs inputs = read_inputs(options, in, log);
    check_inputs(options, inputs, log);
    const std::vector<MetricEntry> metrics = build_metrics(options, env);
    Scoring scoring{options, env, log, {}};
    scoring.common.nrefs = std::to_string(inputs.refs.size());
    out << report(scoring, metrics, inputs, effective_format(options, env));
    return 0;
  } catch (const Refused& refused) {
    return refused.exit_code;
  }
}

}  // namespace csan::scoring
