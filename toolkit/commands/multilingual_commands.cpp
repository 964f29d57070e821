// The multilingual_translation task's part of csan-preprocess (several language pairs
// into one joint dictionary and SentencePiece model with language tokens) and csan-score
// (the translation task's: hypotheses of one pair are scored like any translation).
#include <ostream>

#include "toolkit/commands/translation_preprocess_command.h"
#include "toolkit/commands/translation_score_command.h"
#include "toolkit/data/multilingual_preprocess.h"

CSAN_REGISTRATION_ANCHOR(multilingual_commands)

namespace po = boost::program_options;

namespace csan::commands {

namespace {

class MultilingualPreprocess : public TaskCommand {
 public:
  MultilingualPreprocess()
      : TaskCommand(
            "usage: csan-preprocess --task multilingual_translation --lang-pairs SRC-TGT,... --trainpref PREFIX "
            "--destdir DIR [options]",
            "Multilingual translation (--task multilingual_translation): the files PREFIX.SRC-TGT.{SRC,TGT} of each "
            "pair (or PREFIX.TGT-SRC.*) -> one SentencePiece model, one joint dictionary with the tokens __LANG__, "
            "binarized splits per pair") {
    auto& b = settings_.base;
    options_.add_options()("lang-pairs", po::value(&lang_pairs_),
                           "language pairs, comma-separated (en-de,de-en,en-fr)")(
        "trainpref", po::value(&trainpref_), "training file prefix(es), comma-separated (concatenated)")(
        "validpref", po::value(&validpref_), "validation prefix(es), comma-separated (valid, valid1, ...)")(
        "testpref", po::value(&testpref_), "test prefix(es), comma-separated (test, test1, ...)")(
        "destdir", po::value(&b.destdir)->default_value("data-bin"), "output directory")(
        "workers", po::value(&b.workers)->default_value(1), "threads for encoding and binarizing")(
        "srcdict", po::value(&b.srcdict), "reuse this joint dictionary (dict.txt; missing language tokens are added)")(
        "thresholdsrc", po::value(&b.thresholdsrc)->default_value(0), "drop symbols seen fewer times")(
        "nwordssrc", po::value(&b.nwordssrc)->default_value(-1), "keep at most this many symbols (-1: all)")(
        "padding-factor", po::value(&b.padding_factor)->default_value(8),
        "pad the dictionary size to a multiple of this");
    add_sentencepiece_options(options_, b, spm_seed_);
  }

  int run(const po::variables_map&, const CommandStreams& io) override {
    set_spm_seed(settings_.base, spm_seed_);
    settings_.pairs = data::parse_lang_pairs(lang_pairs_, "lang-pairs");
    settings_.base.trainpref = split_commas(trainpref_);
    settings_.base.validpref = split_commas(validpref_);
    settings_.base.testpref = split_commas(testpref_);
    const auto summary = data::preprocess_multilingual(settings_);
    io.log << "csan-preprocess: wrote " << settings_.base.destdir << " (" << data::format_lang_pairs(settings_.pairs)
           << ")\n"
           << summary.format() << std::flush;
    return 0;
  }

 private:
  data::MultilingualPreprocessOptions settings_;
  std::string lang_pairs_, trainpref_, validpref_, testpref_;
  int64_t spm_seed_ = 1;
};

core::Registrar<TaskCommands> multilingual_commands(
    task_commands(), "multilingual_translation",
    {"several language pairs with one joint dictionary and language tokens (__en__); scored as translation",
     [] { return std::unique_ptr<TaskCommand>(std::make_unique<MultilingualPreprocess>()); },
     translation_score_command});

}  // namespace

}  // namespace csan::commands
