// csan-score: sacreBLEU 2.6.0's command line on local files (same option names, short
// forms and defaults). This file only parses options; the work is in
// toolkit/scoring/score_run.
#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "toolkit/core/checked_output.h"
#include "toolkit/core/error.h"
#include "toolkit/scoring/score_run.h"

namespace po = boost::program_options;

namespace {

constexpr const char* kProgram = "csan-score";
constexpr int kUsageError = 2;  // argparse's exit code for bad arguments

const char* kUsage =
    "usage: csan-score [-h] [--input [INPUT ...]] [--num-refs NUM_REFS] [--metrics {bleu,chrf,ter} "
    "[{bleu,chrf,ter} ...]] [--sentence-level] [--smooth-method {none,floor,add-k,exp}] [--smooth-value V] "
    "[--tokenize TOK] [--spm-model FILE] [--lowercase] [--force] [--chrf-* ...] [--ter-* ...] [--confidence] "
    "[--confidence-n N] [--paired-ar | --paired-bs] [--paired-ar-n N] [--paired-bs-n N] [--paired-jobs N] "
    "[--quiet] [--short] [--score-only] [--width WIDTH] [--no-color] [--format {json,text,latex}] [--version] "
    "[refs ...]";

struct UsageError {
  std::string message;
};

// sacreBLEU's multi-letter single-dash forms (argparse accepts them; Boost does not).
const std::map<std::string, std::string>& aliases() {
  static const std::map<std::string, std::string> table{{"-i", "--input"},
                                                        {"-nr", "--num-refs"},
                                                        {"-e", "--encoding"},
                                                        {"-m", "--metrics"},
                                                        {"-sl", "--sentence-level"},
                                                        {"-s", "--smooth-method"},
                                                        {"-sv", "--smooth-value"},
                                                        {"-tok", "--tokenize"},
                                                        {"-lc", "--lowercase"},
                                                        {"-cc", "--chrf-char-order"},
                                                        {"-cw", "--chrf-word-order"},
                                                        {"-ci", "--confidence"},
                                                        {"-cin", "--confidence-n"},
                                                        {"-par", "--paired-ar"},
                                                        {"-pbs", "--paired-bs"},
                                                        {"-parn", "--paired-ar-n"},
                                                        {"-pbsn", "--paired-bs-n"},
                                                        {"-j", "--paired-jobs"},
                                                        {"-q", "--quiet"},
                                                        {"-sh", "--short"},
                                                        {"-b", "--score-only"},
                                                        {"-w", "--width"},
                                                        {"-nc", "--no-color"},
                                                        {"-f", "--format"},
                                                        {"-V", "--version"},
                                                        {"-h", "--help"}};
  return table;
}

// Rewrites "-tok zh", "-tok=zh" and "-w3" into the long forms.
std::vector<std::string> canonical_arguments(int argc, char** argv) {
  std::vector<std::string> out;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.size() < 2 || arg[0] != '-' || arg[1] == '-') {
      out.push_back(arg);
      continue;
    }
    const std::size_t equals = arg.find('=');
    const std::string name = arg.substr(0, equals);
    if (auto it = aliases().find(name); it != aliases().end()) {
      out.push_back(it->second + (equals == std::string::npos ? "" : arg.substr(equals)));
      continue;
    }
    if (auto it = aliases().find(arg.substr(0, 2)); it != aliases().end()) {  // "-w3"
      out.push_back(it->second);
      out.push_back(arg.substr(2));
      continue;
    }
    out.push_back(arg);  // a negative number or an unknown option: Boost decides
  }
  return out;
}

void check_choice(const std::string& option, const std::string& value, const std::vector<std::string>& choices) {
  for (const auto& choice : choices)
    if (value == choice) return;
  std::string list;
  for (const auto& choice : choices) list += (list.empty() ? "'" : ", '") + choice + "'";
  throw UsageError{"argument " + option + ": invalid choice: '" + value + "' (choose from " + list + ")"};
}

int run(int argc, char** argv) {
  using csan::scoring::ScoreOptions;
  ScoreOptions options;
  std::vector<std::string> inputs;
  std::string tokenize;
  std::string encoding = "utf-8";
  double smooth_value = 0.0;

  po::options_description described("csan-score (sacreBLEU 2.6.0 compatible)");
  described.add_options()("help", "show this help message and exit")("version", "print the version and exit")(
      "input", po::value<std::vector<std::string>>(&inputs)->multitoken()->zero_tokens(),
      "-i: read the systems from these files instead of stdin")(
      "refs", po::value<std::vector<std::string>>(&options.refs), "reference files (before -i)")(
      "num-refs", po::value<int>(&options.num_refs)->default_value(1), "-nr: tab-separated references per line")(
      "encoding", po::value<std::string>(&encoding)->default_value("utf-8"), "-e: only utf-8 is supported")(
      "metrics", po::value<std::vector<std::string>>(&options.metrics)->multitoken(), "-m: bleu chrf ter")(
      "sentence-level", po::bool_switch(&options.sentence_level), "-sl: score every sentence")(
      "smooth-method", po::value<std::string>(&options.bleu.smooth_method)->default_value("exp"),
      "-s: none, floor, add-k, exp")("smooth-value", po::value<double>(&smooth_value),
                                     "-sv: floor 0.1, add-k 1 by default")(
      "tokenize", po::value<std::string>(&tokenize),
      "-tok: 13a (default), intl, zh, char, none, spm, flores101, flores200")(
      "spm-model", po::value<std::string>(&options.bleu.spm_model),
      "SentencePiece model for spm/flores (default: $SACREBLEU/models/<sacreBLEU's file name>)")(
      "lowercase", po::bool_switch(&options.bleu.lowercase), "-lc: case-insensitive BLEU")(
      "force", po::bool_switch(&options.bleu.force), "do not warn about tokenized input")(
      "chrf-char-order", po::value<int>(&options.chrf.char_order)->default_value(6), "-cc")(
      "chrf-word-order", po::value<int>(&options.chrf.word_order)->default_value(0), "-cw (2 = chrF++)")(
      "chrf-beta", po::value<int>(&options.chrf.beta)->default_value(2), "recall weight")(
      "chrf-whitespace", po::bool_switch(&options.chrf.whitespace), "keep whitespace in character n-grams")(
      "chrf-lowercase", po::bool_switch(&options.chrf.lowercase), "case-insensitive chrF")(
      "chrf-eps-smoothing", po::bool_switch(&options.chrf.eps_smoothing),
      "epsilon smoothing instead of effective order")(
      "ter-case-sensitive", po::bool_switch(&options.ter.case_sensitive), "case-sensitive TER")(
      "ter-asian-support", po::bool_switch(&options.ter.asian_support), "treat Asian characters specially")(
      "ter-no-punct", po::bool_switch(&options.ter.no_punct), "remove punctuation")(
      "ter-normalized", po::bool_switch(&options.ter.normalized), "normalize and tokenize")(
      "confidence", po::bool_switch(&options.confidence), "-ci: bootstrap confidence interval")(
      "confidence-n", po::value<int>(&options.confidence_n)->default_value(1000), "-cin: resamples")(
      "paired-ar", po::bool_switch(&options.paired_ar), "-par: paired approximate randomization")(
      "paired-bs", po::bool_switch(&options.paired_bs), "-pbs: paired bootstrap resampling")(
      "paired-ar-n", po::value<int>(&options.paired_ar_n)->default_value(10000), "-parn: trials")(
      "paired-bs-n", po::value<int>(&options.paired_bs_n)->default_value(1000), "-pbsn: resamples")(
      "paired-jobs", po::value<int>(&options.paired_jobs)->default_value(1), "-j: threads (0 or 1: all cores)")(
      "quiet", po::bool_switch(&options.quiet), "-q: no log messages")(
      "short", po::bool_switch(&options.short_signature), "-sh: short signatures")(
      "score-only", po::bool_switch(&options.score_only), "-b: print only the score")(
      "width", po::value<int>(&options.width)->default_value(1), "-w: decimals")(
      "no-color", "-nc: accepted; output is never coloured")(
      "format", po::value<std::string>(&options.format)->default_value("json"), "-f: json, text, latex");
  po::positional_options_description positional;
  positional.add("refs", -1);

  po::variables_map vm;
  try {
    const auto args = canonical_arguments(argc, argv);
    // Boost guesses unambiguous abbreviations, as argparse does.
    po::parsed_options parsed = po::command_line_parser(args).options(described).positional(positional).run();
    // argparse keeps the last occurrence of a repeated option (positional references add up).
    std::map<std::string, std::size_t> last;
    for (std::size_t i = 0; i < parsed.options.size(); ++i) last[parsed.options[i].string_key] = i;
    std::vector<po::option> kept;
    for (std::size_t i = 0; i < parsed.options.size(); ++i)
      if (parsed.options[i].string_key == "refs" || last[parsed.options[i].string_key] == i)
        kept.push_back(parsed.options[i]);
    parsed.options = kept;
    po::store(parsed, vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw UsageError{e.what()};
  }
  csan::CheckedOutput output;
  if (vm.count("help")) {
    output.stream() << kUsage << "\n\n" << described << "\n";
    output.close();
    return 0;
  }
  if (vm.count("version")) {
    output.stream() << "csan-score 2.6.0\n";
    output.close();
    return 0;
  }
  for (const auto& metric : options.metrics) check_choice("--metrics/-m", metric, {"bleu", "chrf", "ter"});
  check_choice("--smooth-method/-s", options.bleu.smooth_method, {"none", "floor", "add-k", "exp"});
  if (!tokenize.empty())
    check_choice(
        "--tokenize/-tok", tokenize,
        {"none", "zh", "13a", "intl", "char", "ja-mecab", "ko-mecab", "spm", "flores101", "flores200", "spBLEU-1K"});
  check_choice("--format/-f", options.format, {"json", "text", "latex"});
  if (options.paired_ar && options.paired_bs)
    throw UsageError{"argument --paired-ar/-par: not allowed with argument --paired-bs/-pbs"};
  if (encoding != "utf-8" && encoding != "utf8" && encoding != "UTF-8")
    throw csan::Error("--encoding: only utf-8 is supported (got '" + encoding + "')");
  if (vm.count("input")) options.inputs = inputs;
  if (!tokenize.empty()) options.bleu.tokenize = tokenize;
  if (vm.count("smooth-value")) options.bleu.smooth_value = smooth_value;
  const int status = csan::scoring::score_run(options, std::cin, output.stream(), std::cerr,
                                              csan::scoring::ScoreEnvironment::from_process());
  output.close();
  return status;
}

int main_body(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const UsageError& e) {
    std::cerr << kUsage << "\n" << kProgram << ": error: " << e.message << "\n";
    return kUsageError;
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  return csan::run_main(kProgram, main_body, argc, argv);
}
