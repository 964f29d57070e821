#include "toolkit/commands/tagging_preprocess_command.h"

#include <ostream>

#include "toolkit/core/error.h"
#include "toolkit/data/tagging_preprocess.h"

namespace po = boost::program_options;

namespace csan::commands {

namespace {

class TaggingPreprocess : public TaskCommand {
 public:
  TaggingPreprocess()
      : TaskCommand(
            "usage: csan-preprocess --task tagging --trainpref PREFIX [--validpref P --testpref P] --destdir "
            "DIR [options]",
            "Tagging (--task tagging): CoNLL-U -> vocabularies and binarized chunks") {
    options_.add_options()("trainpref", po::value(&t_.trainpref), "the training file PREFIX.conllu")(
        "validpref", po::value(&t_.validpref), "the validation file PREFIX.conllu")("testpref", po::value(&t_.testpref),
                                                                                    "the test file PREFIX.conllu")(
        "destdir", po::value(&t_.destdir)->default_value("data-bin"), "output directory")(
        "tag-column", po::value(&column_)->default_value("upos"), "the tags to learn: upos or xpos")(
        "vocab-protocol", po::value(&protocol_)->default_value("standard"),
        "standard (train only, thresholds) or convatt (the convoluted-attention paper's: half the word types of "
        "train+dev+test, labels of all splits, characters of train)")(
        "word-threshold", po::value(&t_.standard.word_threshold)->default_value(2),
        "standard: training words seen fewer times map to <OOV>")(
        "char-threshold", po::value(&t_.standard.char_threshold)->default_value(1),
        "standard: characters seen fewer times map to <OOV>")(
        "chunk-length", po::value(&t_.chunk_length)->default_value(60),
        "sentences are cut into chunks of at most this many words")(
        "word-chars", po::value(&t_.word_chars)->default_value(20), "characters kept per word");
  }

  int run(const po::variables_map& given, const CommandStreams& io) override {
    t_.column = data::parse_tag_column(column_);
    t_.protocol = data::parse_vocab_protocol(protocol_);
    if (t_.protocol == data::VocabProtocol::kConvatt)
      for (const char* name : {"word-threshold", "char-threshold"})
        if (!given[name].defaulted()) throw Error(std::string("--") + name + ": only for --vocab-protocol standard");
    const auto summary = data::preprocess_tagging(t_);
    io.log << "csan-preprocess: wrote " << t_.destdir << "\n" << summary.format() << std::flush;
    return 0;
  }

 private:
  data::TaggingPreprocessOptions t_;
  std::string column_, protocol_;
};

}  // namespace

std::unique_ptr<TaskCommand> tagging_preprocess_command() { return std::make_unique<TaggingPreprocess>(); }

}  // namespace csan::commands
