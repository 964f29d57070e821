#include "toolkit/commands/translation_score_command.h"

#include <string>
#include <vector>

#include "toolkit/core/error.h"
#include "toolkit/scoring/score_run.h"

namespace po = boost::program_options;

namespace csan::commands {

namespace {

void check_choice(const std::string& option, const std::string& value, const std::vector<std::string>& choices) {
  for (const auto& choice : choices)
    if (value == choice) return;
  std::string list;
  for (const auto& choice : choices) list += (list.empty() ? "'" : ", '") + choice + "'";
  throw UsageError("argument " + option + ": invalid choice: '" + value + "' (choose from " + list + ")");
}

class TranslationScore : public TaskCommand {
 public:
  TranslationScore()
      : TaskCommand(
            "usage: csan-score [-h] [--input [INPUT ...]] [--num-refs NUM_REFS] [--metrics {bleu,chrf,ter} "
            "[{bleu,chrf,ter} ...]] [--sentence-level] [--smooth-method {none,floor,add-k,exp}] [--smooth-value V] "
            "[--tokenize TOK] [--spm-model FILE] [--lowercase] [--force] [--chrf-* ...] [--ter-* ...] [--confidence] "
            "[--confidence-n N] [--paired-ar | --paired-bs] [--paired-ar-n N] [--paired-bs-n N] [--paired-jobs N] "
            "[--quiet] [--short] [--score-only] [--width WIDTH] [--no-color] [--format {json,text,latex}] "
            "[--version] [refs ...]",
            "Translation (--task translation, sacreBLEU 2.6.0 compatible): csan-score REF [REF ...] -i SYS [SYS ...]") {
    auto& o = options_;
    o.add_options()("input", po::value<std::vector<std::string>>(&inputs_)->multitoken()->zero_tokens(),
                    "-i: read the systems from these files instead of stdin")(
        "refs", po::value<std::vector<std::string>>(&s_.refs), "reference files (before -i)")(
        "num-refs", po::value<int>(&s_.num_refs)->default_value(1), "-nr: tab-separated references per line")(
        "encoding", po::value<std::string>(&encoding_)->default_value("utf-8"), "-e: only utf-8 is supported")(
        "metrics", po::value<std::vector<std::string>>(&s_.metrics)->multitoken(), "-m: bleu chrf ter")(
        "sentence-level", po::bool_switch(&s_.sentence_level), "-sl: score every sentence")(
        "smooth-method", po::value<std::string>(&s_.bleu.smooth_method)->default_value("exp"),
        "-s: none, floor, add-k, exp")("smooth-value", po::value<double>(&smooth_value_),
                                       "-sv: floor 0.1, add-k 1 by default")(
        "tokenize", po::value<std::string>(&tokenize_),
        "-tok: 13a (default), intl, zh, char, none, spm, flores101, flores200")(
        "spm-model", po::value<std::string>(&s_.bleu.spm_model),
        "SentencePiece model for spm/flores (default: $SACREBLEU/models/<sacreBLEU's file name>)")(
        "lowercase", po::bool_switch(&s_.bleu.lowercase), "-lc: case-insensitive BLEU")(
        "force", po::bool_switch(&s_.bleu.force), "do not warn about tokenized input")(
        "chrf-char-order", po::value<int>(&s_.chrf.char_order)->default_value(6), "-cc")(
        "chrf-word-order", po::value<int>(&s_.chrf.word_order)->default_value(0), "-cw (2 = chrF++)")(
        "chrf-beta", po::value<int>(&s_.chrf.beta)->default_value(2), "recall weight")(
        "chrf-whitespace", po::bool_switch(&s_.chrf.whitespace), "keep whitespace in character n-grams")(
        "chrf-lowercase", po::bool_switch(&s_.chrf.lowercase), "case-insensitive chrF")(
        "chrf-eps-smoothing", po::bool_switch(&s_.chrf.eps_smoothing), "epsilon smoothing instead of effective order")(
        "ter-case-sensitive", po::bool_switch(&s_.ter.case_sensitive), "case-sensitive TER")(
        "ter-asian-support", po::bool_switch(&s_.ter.asian_support), "treat Asian characters specially")(
        "ter-no-punct", po::bool_switch(&s_.ter.no_punct), "remove punctuation")(
        "ter-normalized", po::bool_switch(&s_.ter.normalized), "normalize and tokenize")(
        "confidence", po::bool_switch(&s_.confidence), "-ci: bootstrap confidence interval")(
        "confidence-n", po::value<int>(&s_.confidence_n)->default_value(1000), "-cin: resamples")(
        "paired-ar", po::bool_switch(&s_.paired_ar), "-par: paired approximate randomization")(
        "paired-bs", po::bool_switch(&s_.paired_bs), "-pbs: paired bootstrap resampling")(
        "paired-ar-n", po::value<int>(&s_.paired_ar_n)->default_value(10000), "-parn: trials")(
        "paired-bs-n", po::value<int>(&s_.paired_bs_n)->default_value(1000), "-pbsn: resamples")(
        "paired-jobs", po::value<int>(&s_.paired_jobs)->default_value(1), "-j: threads (0 or 1: all cores)")(
        "quiet", po::bool_switch(&s_.quiet), "-q: no log messages")("short", po::bool_switch(&s_.short_signature),
                                                                    "-sh: short signatures")(
        "score-only", po::bool_switch(&s_.score_only), "-b: print only the score")(
        "width", po::value<int>(&s_.width)->default_value(1), "-w: decimals")(
        "no-color", "-nc: accepted; output is never coloured")(
        "format", po::value<std::string>(&s_.format)->default_value("json"), "-f: json, text, latex");
    positional_.add("refs", -1);
  }

  int run(const po::variables_map& given, const CommandStreams& io) override {
    for (const auto& metric : s_.metrics) check_choice("--metrics/-m", metric, {"bleu", "chrf", "ter"});
    check_choice("--smooth-method/-s", s_.bleu.smooth_method, {"none", "floor", "add-k", "exp"});
    if (!tokenize_.empty())
      check_choice(
          "--tokenize/-tok", tokenize_,
          {"none", "zh", "13a", "intl", "char", "ja-mecab", "ko-mecab", "spm", "flores101", "flores200", "spBLEU-1K"});
    check_choice("--format/-f", s_.format, {"json", "text", "latex"});
    if (s_.paired_ar && s_.paired_bs)
      throw UsageError("argument --paired-ar/-par: not allowed with argument --paired-bs/-pbs");
    if (encoding_ != "utf-8" && encoding_ != "utf8" && encoding_ != "UTF-8")
      throw Error("--encoding: only utf-8 is supported (got '" + encoding_ + "')");
    if (given.count("input")) s_.inputs = inputs_;
    if (!tokenize_.empty()) s_.bleu.tokenize = tokenize_;
    if (given.count("smooth-value")) s_.bleu.smooth_value = smooth_value_;
    return scoring::score_run(s_, io.in, io.out, io.log, scoring::ScoreEnvironment::from_process());
  }

 private:
  scoring::ScoreOptions s_;
  std::vector<std::string> inputs_;
  std::string tokenize_;
  std::string encoding_ = "utf-8";
  double smooth_value_ = 0.0;
};

}  // namespace

std::unique_ptr<TaskCommand> translation_score_command() { return std::make_unique<TranslationScore>(); }

}  // namespace csan::commands
