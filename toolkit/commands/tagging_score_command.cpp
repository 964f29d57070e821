#include "toolkit/commands/tagging_score_command.h"

#include <ostream>
#include <string>
#include <vector>

#include "toolkit/core/error.h"
#include "toolkit/data/conllu.h"
#include "toolkit/data/tagging_vocabulary.h"
#include "toolkit/scoring/score_run.h"
#include "toolkit/scoring/tagging_accuracy.h"
#include "toolkit/scoring/tagging_report.h"

namespace po = boost::program_options;

namespace csan::commands {

namespace {

scoring::TaggedText tagged_text(const std::string& path, data::TagColumn column) {
  const data::ConllCorpus corpus = data::read_conllu(path);
  scoring::TaggedText text;
  text.origin = path;
  for (const auto& sentence : corpus.sentences) {
    text.forms.emplace_back();
    text.tags.emplace_back();
    text.first_lines.push_back(sentence.first_line);
    for (const auto& word : sentence.words) {
      text.forms.back().push_back(word.form);
      text.tags.back().push_back(word.tag(column));
    }
  }
  return text;
}

class TaggingScore : public TaskCommand {
 public:
  TaggingScore()
      : TaskCommand(
            "usage: csan-score --task tagging REF.conllu -i SYS.conllu [SYS2.conllu ...] [--train TRAIN.conllu] "
            "[options]",
            "Tagging (--task tagging): csan-score --task tagging REF.conllu -i SYS.conllu [SYS2.conllu ...]") {
    options_.add_options()("reference", po::value(&reference_), "the reference CoNLL-U file (positional)")(
        "input,i", po::value(&inputs_)->multitoken(),
        "system outputs (CoNLL-U); the first is the baseline of --paired-bs")(
        "train", po::value(&train_),
        "the training CoNLL-U file: OOV = form not in it (unless --vocab), ambiguous = 2+ tags in it")(
        "vocab", po::value(&vocab_),
        "a word vocabulary (the data's dict.words.txt): OOV = form not in it (the paper's)")(
        "tag-column", po::value(&column_)->default_value("upos"), "upos or xpos")(
        "paired-bs", po::bool_switch(&paired_bs_), "paired bootstrap resampling of sentences against the first system")(
        "paired-bs-n", po::value(&paired_bs_n_)->default_value(1000), "resamples")(
        "format,f", po::value(&format_)->default_value("json"), "json or text")(
        "width,w", po::value(&width_)->default_value(2), "decimals");
    positional_.add("reference", 1);
  }

  int run(const po::variables_map&, const CommandStreams& io) override {
    if (reference_.empty()) throw Error("missing the reference CoNLL-U file (csan-score --task tagging REF -i SYS)");
    if (inputs_.empty()) throw Error("missing -i SYS.conllu (the system output to score)");
    if (format_ != "json" && format_ != "text") throw Error("--format: '" + format_ + "' (json or text)");
    if (width_ < 0 || width_ > 10) throw Error("--width: " + std::to_string(width_) + " (0 to 10 decimals)");
    if (paired_bs_n_ < 1) throw Error("--paired-bs-n: must be at least 1");
    if (!vocab_.empty() && train_.empty())
      throw Error("--vocab needs --train (ambiguous words are those with 2+ tags in the training data)");

    const data::TagColumn tag_column = data::parse_tag_column(column_);
    scoring::TaggingScoreSettings settings;
    settings.tag_column = data::tag_column_name(tag_column);
    settings.paired_bs = paired_bs_;
    settings.paired_bs_n = paired_bs_n_;
    if (auto seed = scoring::ScoreEnvironment::from_process().seed)
      settings.seed = scoring::ResamplingSeed::parse(*seed);
    if (!train_.empty()) {
      settings.classes = scoring::WordClasses::from_training(tagged_text(train_, tag_column));
      if (!vocab_.empty()) {
        const auto words = data::TaggingVocabulary::load(vocab_);
        settings.classes->vocabulary.emplace();
        for (int i = 2; i < words.size(); ++i) settings.classes->vocabulary->insert(words.symbol(i));
        settings.classes->oov_source = vocab_;
      }
    }
    std::vector<scoring::TaggedText> systems;
    for (const auto& input : inputs_) systems.push_back(tagged_text(input, tag_column));
    const auto scores = scoring::score_tagging(tagged_text(reference_, tag_column), systems, settings);
    io.out << (format_ == "json" ? scoring::tagging_report_json(scores, width_)
                                 : scoring::tagging_report_text(scores, width_));
    return 0;
  }

 private:
  std::string reference_, train_, vocab_, column_, format_;
  std::vector<std::string> inputs_;
  int width_ = 2, paired_bs_n_ = 1000;
  bool paired_bs_ = false;
};

}  // namespace

std::unique_ptr<TaskCommand> tagging_score_command() { return std::make_unique<TaggingScore>(); }

}  // namespace csan::commands
