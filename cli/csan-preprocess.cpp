// csan-preprocess: raw parallel text -> SentencePiece model, fairseq dictionaries and
// binarized splits (--task translation, the default), or CoNLL-U -> tagging vocabularies
// and binarized chunks (--task tagging). Option parsing only; the work is
// csan::data::preprocess() / csan::data::preprocess_tagging().
#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "toolkit/core/error.h"
#include "toolkit/core/temporary_paths.h"
#include "toolkit/data/preprocess.h"
#include "toolkit/data/tagging_preprocess.h"

namespace po = boost::program_options;

namespace {

std::vector<std::string> split_commas(const std::string& list) {
  std::vector<std::string> items;
  std::stringstream in(list);
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty()) items.push_back(item);
  return items;
}

// An option of the other task's group given on the command line is an error naming it.
void refuse_options_of(const po::options_description& group, const po::variables_map& vm, const std::string& task) {
  for (const auto& option : group.options()) {
    const std::string name = option->long_name();
    if (vm.count(name) && !vm[name].defaulted())
      throw csan::Error("--" + name + ": not an option of --task " + task);
  }
}

int tagging(const po::variables_map& vm, csan::data::TaggingPreprocessOptions o, const std::string& column,
            const std::string& protocol) {
  o.column = csan::data::parse_tag_column(column);
  o.protocol = csan::data::parse_vocab_protocol(protocol);
  if (o.protocol == csan::data::VocabProtocol::kConvatt)
    for (const char* name : {"word-threshold", "char-threshold"})
      if (!vm[name].defaulted()) throw csan::Error(std::string("--") + name + ": only for --vocab-protocol standard");
  auto summary = csan::data::preprocess_tagging(o);
  std::fprintf(stderr, "csan-preprocess: wrote %s\n%s", o.destdir.c_str(), summary.format().c_str());
  return 0;
}

int body(int argc, char** argv) {
  csan::data::PreprocessOptions o;
  csan::data::TaggingPreprocessOptions t;
  std::string task, trainpref, validpref, testpref, column, protocol;
  int64_t spm_seed = 1;  // signed, so that "-1" is refused instead of wrapping to 2^64 - 1
  po::options_description common("Usage: csan-preprocess [--task translation] --source-lang SRC --target-lang TGT --trainpref PREFIX --destdir DIR [options]\n       csan-preprocess --task tagging --trainpref PREFIX [--validpref P --testpref P] --destdir DIR [options]");
  common.add_options()
      ("help,h", "show this help")
      ("task", po::value(&task)->default_value("translation"), "translation (raw parallel text) or tagging (CoNLL-U)")
      ("trainpref", po::value(&trainpref), "training file prefix(es), comma-separated (concatenated); tagging: one PREFIX.conllu")
      ("validpref", po::value(&validpref), "validation prefix(es), comma-separated (valid, valid1, ...); tagging: one")
      ("testpref", po::value(&testpref), "test prefix(es), comma-separated (test, test1, ...); tagging: one")
      ("destdir", po::value(&o.destdir)->default_value("data-bin"), "output directory");
  po::options_description tagging_options("Tagging (--task tagging)");
  tagging_options.add_options()
      ("tag-column", po::value(&column)->default_value("upos"), "the tags to learn: upos or xpos")
      ("vocab-protocol", po::value(&protocol)->default_value("standard"),
       "standard (train only, thresholds) or convatt (the convoluted-attention paper's: half the word types of "
       "train+dev+test, labels of all splits, characters of train)")
      ("word-threshold", po::value(&t.standard.word_threshold)->default_value(2), "standard: training words seen fewer times map to <OOV>")
      ("char-threshold", po::value(&t.standard.char_threshold)->default_value(1), "standard: characters seen fewer times map to <OOV>")
      ("chunk-length", po::value(&t.chunk_length)->default_value(60), "sentences are cut into chunks of at most this many words")
      ("word-chars", po::value(&t.word_chars)->default_value(20), "characters kept per word");
  po::options_description desc("Translation (--task translation)");
  desc.add_options()
      ("source-lang,s", po::value(&o.source_lang), "source language (files PREFIX.SRC)")
      ("target-lang,t", po::value(&o.target_lang), "target language (files PREFIX.TGT)")
      ("only-source", po::bool_switch(&o.only_source), "monolingual data: source side only")
      ("workers", po::value(&o.workers)->default_value(1), "threads for encoding and binarizing")
      ("spm-model", po::value(&o.spm_model), "reuse this SentencePiece model instead of training one")
      ("spm-per-language", po::bool_switch(&o.spm_per_language), "train one model per language (default: joint)")
      ("spm-vocab-size", po::value(&o.spm.vocab_size)->default_value(8000), "SentencePiece vocabulary size")
      ("spm-model-type", po::value(&o.spm.model_type)->default_value("unigram"), "unigram | bpe | char | word")
      ("spm-character-coverage", po::value(&o.spm.character_coverage)->default_value(1.0), "characters covered by the model")
      ("spm-input-sentence-size", po::value(&o.spm.input_sentence_size)->default_value(0), "train on a sample of this many sentences (0: all)")
      ("spm-seed", po::value(&spm_seed)->default_value(1), "seed of the training sample")
      ("joined-dictionary", po::bool_switch(&o.joined_dictionary), "one dictionary for both languages")
      ("srcdict", po::value(&o.srcdict), "reuse this source dictionary (dict.txt)")
      ("tgtdict", po::value(&o.tgtdict), "reuse this target dictionary (dict.txt)")
      ("thresholdsrc", po::value(&o.thresholdsrc)->default_value(0), "drop source symbols seen fewer times")
      ("thresholdtgt", po::value(&o.thresholdtgt)->default_value(0), "drop target symbols seen fewer times")
      ("nwordssrc", po::value(&o.nwordssrc)->default_value(-1), "keep at most this many source symbols (-1: all)")
      ("nwordstgt", po::value(&o.nwordstgt)->default_value(-1), "keep at most this many target symbols (-1: all)")
      ("padding-factor", po::value(&o.padding_factor)->default_value(8), "pad dictionary sizes to a multiple of this")
      ("min-len", po::value(&o.filter.min_len)->default_value(0), "drop training pairs with a side shorter than this (tokens)")
      ("max-len", po::value(&o.filter.max_len)->default_value(0), "drop training pairs with a side longer than this (tokens; 0: no limit)")
      ("max-len-ratio", po::value(&o.filter.max_len_ratio)->default_value(0.0), "drop training pairs whose length ratio exceeds this (0: no limit)");

  po::options_description all;
  all.add(common).add(desc).add(tagging_options);
  po::variables_map vm;
  po::store(po::command_line_parser(argc, argv).options(all).run(), vm);
  if (vm.count("help")) {
    std::cout << all << "\n";
    return 0;
  }
  po::notify(vm);
  if (task == "tagging") {
    refuse_options_of(desc, vm, task);
    t.trainpref = trainpref, t.validpref = validpref, t.testpref = testpref, t.destdir = o.destdir;
    return tagging(vm, t, column, protocol);
  }
  if (task != "translation") throw csan::Error("--task: '" + task + "' is not a task (translation or tagging)");
  refuse_options_of(tagging_options, vm, task);
  if (spm_seed < 0) throw csan::Error::for_key("spm-seed", "must not be negative, got " + std::to_string(spm_seed));
  o.spm.seed = static_cast<uint64_t>(spm_seed);
  o.trainpref = split_commas(trainpref);
  o.validpref = split_commas(validpref);
  o.testpref = split_commas(testpref);

  auto summary = csan::data::preprocess(o);
  std::fprintf(stderr, "csan-preprocess: wrote %s\n%s", o.destdir.c_str(), summary.format().c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // Ctrl-C or kill removes DEST.tmp.PID.N instead of leaving it behind (exit 130 / 143).
  csan::remove_temporaries_on_interrupt("csan-preprocess");
  return csan::run_main("csan-preprocess", body, argc, argv);
}
