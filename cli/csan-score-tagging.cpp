#include "csan-score-tagging.h"

#include <boost/program_options.hpp>

#include <iostream>
#include <string>
#include <vector>

#include "toolkit/core/error.h"
#include "toolkit/data/conllu.h"
#include "toolkit/data/tagging_vocabulary.h"
#include "toolkit/scoring/score_run.h"
#include "toolkit/scoring/tagging_accuracy.h"
#include "toolkit/scoring/tagging_report.h"

namespace po = boost::program_options;

namespace csan::cli {

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

}  // namespace

bool tagging_requested(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--task=tagging" || (arg == "--task" && i + 1 < argc && std::string(argv[i + 1]) == "tagging"))
      return true;
  }
  return false;
}

int score_tagging_main(int argc, char** argv) {
  std::string task, reference, train, vocab, column, format;
  std::vector<std::string> inputs;
  int width = 2, paired_bs_n = 1000;
  bool paired_bs = false;
  po::options_description options(
      "csan-score --task tagging REF.conllu -i SYS.conllu [SYS2.conllu ...] [--train TRAIN.conllu] [options]");
  options.add_options()("help,h", "show this help")("task", po::value(&task), "tagging")(
      "reference", po::value(&reference), "the reference CoNLL-U file (positional)")(
      "input,i", po::value(&inputs)->multitoken(), "system outputs (CoNLL-U); the first is the baseline of --paired-bs")(
      "train", po::value(&train),
      "the training CoNLL-U file: OOV = form not in it (unless --vocab), ambiguous = 2+ tags in it")(
      "vocab", po::value(&vocab), "a word vocabulary (the data's dict.words.txt): OOV = form not in it (the paper's)")(
      "tag-column", po::value(&column)->default_value("upos"), "upos or xpos")(
      "paired-bs", po::bool_switch(&paired_bs), "paired bootstrap resampling of sentences against the first system")(
      "paired-bs-n", po::value(&paired_bs_n)->default_value(1000), "resamples")(
      "format,f", po::value(&format)->default_value("json"), "json or text")(
      "width,w", po::value(&width)->default_value(2), "decimals");
  po::positional_options_description positional;
  positional.add("reference", 1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(options).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw Error(std::string(e.what()) + " (see csan-score --task tagging --help)");
  }
  if (vm.count("help")) {
    std::cout << options << "\n";
    return 0;
  }
  if (reference.empty()) throw Error("missing the reference CoNLL-U file (csan-score --task tagging REF -i SYS)");
  if (inputs.empty()) throw Error("missing -i SYS.conllu (the system output to score)");
  if (format != "json" && format != "text") throw Error("--format: '" + format + "' (json or text)");
  if (width < 0 || width > 10) throw Error("--width: " + std::to_string(width) + " (0 to 10 decimals)");
  if (paired_bs_n < 1) throw Error("--paired-bs-n: must be at least 1");
  if (!vocab.empty() && train.empty())
    throw Error("--vocab needs --train (ambiguous words are those with 2+ tags in the training data)");

  const data::TagColumn tag_column = data::parse_tag_column(column);
  scoring::TaggingScoreSettings settings;
  settings.tag_column = data::tag_column_name(tag_column);
  settings.paired_bs = paired_bs;
  settings.paired_bs_n = paired_bs_n;
  if (auto seed = scoring::ScoreEnvironment::from_process().seed) settings.seed = scoring::ResamplingSeed::parse(*seed);
  if (!train.empty()) {
    settings.classes = scoring::WordClasses::from_training(tagged_text(train, tag_column));
    if (!vocab.empty()) {
      const auto words = data::TaggingVocabulary::load(vocab);
      settings.classes->vocabulary.emplace();
      for (int i = 2; i < words.size(); ++i) settings.classes->vocabulary->insert(words.symbol(i));
      settings.classes->oov_source = vocab;
    }
  }
  std::vector<scoring::TaggedText> systems;
  for (const auto& input : inputs) systems.push_back(tagged_text(input, tag_column));
  const auto scores = scoring::score_tagging(tagged_text(reference, tag_column), systems, settings);
  std::cout << (format == "json" ? scoring::tagging_report_json(scores, width)
                                 : scoring::tagging_report_text(scores, width));
  return 0;
}

}  // namespace csan::cli
