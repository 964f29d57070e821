#include "toolkit/commands/translation_preprocess_command.h"

#include <memory>
#include <ostream>
#include <sstream>

#include "toolkit/commands/checkpoint_vocabulary.h"
#include "toolkit/core/error.h"
#include "toolkit/data/preprocess.h"

namespace po = boost::program_options;

namespace csan::commands {

std::vector<std::string> split_commas(const std::string& list) {
  std::vector<std::string> items;
  std::stringstream in(list);
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty()) items.push_back(item);
  return items;
}

void add_sentencepiece_options(po::options_description& options, data::PreprocessOptions& p, int64_t& spm_seed) {
  options.add_options()("spm-model", po::value(&p.spm_model), "reuse this SentencePiece model instead of training one")(
      "spm-vocab-size", po::value(&p.spm.vocab_size)->default_value(8000), "SentencePiece vocabulary size")(
      "spm-model-type", po::value(&p.spm.model_type)->default_value("unigram"), "unigram | bpe | char | word")(
      "spm-character-coverage", po::value(&p.spm.character_coverage)->default_value(1.0),
      "characters covered by the model")("spm-input-sentence-size",
                                         po::value(&p.spm.input_sentence_size)->default_value(0),
                                         "train on a sample of this many sentences (0: all)")(
      "spm-seed", po::value(&spm_seed)->default_value(1), "seed of the training sample");
}

void set_spm_seed(data::PreprocessOptions& p, int64_t spm_seed) {
  // Read signed, so that "-1" is refused instead of wrapping to 2^64 - 1.
  if (spm_seed < 0) throw Error::for_key("spm-seed", "must not be negative, got " + std::to_string(spm_seed));
  p.spm.seed = static_cast<uint64_t>(spm_seed);
}

namespace {

class TranslationPreprocess : public TaskCommand {
 public:
  TranslationPreprocess()
      : TaskCommand(
            "usage: csan-preprocess [--task translation] --source-lang SRC --target-lang TGT --trainpref "
            "PREFIX --destdir DIR [options]",
            "Translation (--task translation): raw parallel text -> SentencePiece model, dictionaries, "
            "binarized splits") {
    auto& o = options_;
    o.add_options()("trainpref", po::value(&trainpref_), "training file prefix(es), comma-separated (concatenated)")(
        "validpref", po::value(&validpref_), "validation prefix(es), comma-separated (valid, valid1, ...)")(
        "testpref", po::value(&testpref_), "test prefix(es), comma-separated (test, test1, ...)")(
        "destdir", po::value(&p_.destdir)->default_value("data-bin"), "output directory")(
        "source-lang,s", po::value(&p_.source_lang), "source language (files PREFIX.SRC)")(
        "target-lang,t", po::value(&p_.target_lang), "target language (files PREFIX.TGT)")(
        "only-source", po::bool_switch(&p_.only_source), "monolingual data: source side only")(
        "workers", po::value(&p_.workers)->default_value(1), "threads for encoding and binarizing")(
        "spm-per-language", po::bool_switch(&p_.spm_per_language), "train one model per language (default: joint)")(
        "joined-dictionary", po::bool_switch(&p_.joined_dictionary), "one dictionary for both languages")(
        "srcdict", po::value(&p_.srcdict), "reuse this source dictionary (dict.txt)")(
        "from-checkpoint", po::value(&p_.from_checkpoint),
        "take the SentencePiece model, dictionaries and languages from this translation checkpoint (to "
        "fine-tune it on the new data)")("tgtdict", po::value(&p_.tgtdict), "reuse this target dictionary (dict.txt)")(
        "thresholdsrc", po::value(&p_.thresholdsrc)->default_value(0), "drop source symbols seen fewer times")(
        "thresholdtgt", po::value(&p_.thresholdtgt)->default_value(0), "drop target symbols seen fewer times")(
        "nwordssrc", po::value(&p_.nwordssrc)->default_value(-1), "keep at most this many source symbols (-1: all)")(
        "nwordstgt", po::value(&p_.nwordstgt)->default_value(-1), "keep at most this many target symbols (-1: all)")(
        "padding-factor", po::value(&p_.padding_factor)->default_value(8),
        "pad dictionary sizes to a multiple of this")("min-len", po::value(&p_.filter.min_len)->default_value(0),
                                                      "drop training pairs with a side shorter than this (tokens)")(
        "max-len", po::value(&p_.filter.max_len)->default_value(0),
        "drop training pairs with a side longer than this (tokens; 0: no limit)")(
        "max-len-ratio", po::value(&p_.filter.max_len_ratio)->default_value(0.0),
        "drop training pairs whose length ratio exceeds this (0: no limit)");
    add_sentencepiece_options(o, p_, spm_seed_);
  }

  int run(const po::variables_map&, const CommandStreams& io) override {
    set_spm_seed(p_, spm_seed_);
    p_.trainpref = split_commas(trainpref_);
    p_.validpref = split_commas(validpref_);
    p_.testpref = split_commas(testpref_);
    // --from-checkpoint's files, removed however the run ends.
    std::unique_ptr<CheckpointVocabularyFiles> checkpoint_vocabulary;
    if (!p_.from_checkpoint.empty()) checkpoint_vocabulary = std::make_unique<CheckpointVocabularyFiles>(p_);
    const auto summary = data::preprocess(p_);
    io.log << "csan-preprocess: wrote " << p_.destdir << "\n" << summary.format() << std::flush;
    return 0;
  }

 private:
  data::PreprocessOptions p_;
  std::string trainpref_, validpref_, testpref_;
  int64_t spm_seed_ = 1;
};

}  // namespace

std::unique_ptr<TaskCommand> translation_preprocess_command() { return std::make_unique<TranslationPreprocess>(); }

}  // namespace csan::commands
