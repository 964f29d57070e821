// csan-preprocess: raw parallel text -> SentencePiece model, fairseq dictionaries and
// binarized splits. Option parsing only; the work is csan::data::preprocess().
#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "toolkit/core/error.h"
#include "toolkit/core/temporary_paths.h"
#include "toolkit/data/preprocess.h"

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

int body(int argc, char** argv) {
  csan::data::PreprocessOptions o;
  std::string trainpref, validpref, testpref;
  int64_t spm_seed = 1;  // signed, so that "-1" is refused instead of wrapping to 2^64 - 1
  po::options_description desc(
      "Usage: csan-preprocess --source-lang SRC --target-lang TGT --trainpref PREFIX --destdir DIR [options]");
  desc.add_options()("help,h", "show this help")("source-lang,s", po::value(&o.source_lang),
                                                 "source language (files PREFIX.SRC)")(
      "target-lang,t", po::value(&o.target_lang), "target language (files PREFIX.TGT)")(
      "only-source", po::bool_switch(&o.only_source), "monolingual data: source side only")(
      "trainpref", po::value(&trainpref), "training file prefix(es), comma-separated (concatenated)")(
      "validpref", po::value(&validpref), "validation prefix(es), comma-separated (valid, valid1, ...)")(
      "testpref", po::value(&testpref), "test prefix(es), comma-separated (test, test1, ...)")(
      "destdir", po::value(&o.destdir)->default_value("data-bin"), "output directory")(
      "workers", po::value(&o.workers)->default_value(1), "threads for encoding and binarizing")(
      "spm-model", po::value(&o.spm_model), "reuse this SentencePiece model instead of training one")(
      "spm-per-language", po::bool_switch(&o.spm_per_language), "train one model per language (default: joint)")(
      "spm-vocab-size", po::value(&o.spm.vocab_size)->default_value(8000), "SentencePiece vocabulary size")(
      "spm-model-type", po::value(&o.spm.model_type)->default_value("unigram"), "unigram | bpe | char | word")(
      "spm-character-coverage", po::value(&o.spm.character_coverage)->default_value(1.0),
      "characters covered by the model")("spm-input-sentence-size",
                                         po::value(&o.spm.input_sentence_size)->default_value(0),
                                         "train on a sample of this many sentences (0: all)")(
      "spm-seed", po::value(&spm_seed)->default_value(1), "seed of the training sample")(
      "joined-dictionary", po::bool_switch(&o.joined_dictionary), "one dictionary for both languages")(
      "srcdict", po::value(&o.srcdict), "reuse this source dictionary (dict.txt)")(
      "tgtdict", po::value(&o.tgtdict), "reuse this target dictionary (dict.txt)")(
      "thresholdsrc", po::value(&o.thresholdsrc)->default_value(0), "drop source symbols seen fewer times")(
      "thresholdtgt", po::value(&o.thresholdtgt)->default_value(0), "drop target symbols seen fewer times")(
      "nwordssrc", po::value(&o.nwordssrc)->default_value(-1), "keep at most this many source symbols (-1: all)")(
      "nwordstgt", po::value(&o.nwordstgt)->default_value(-1), "keep at most this many target symbols (-1: all)")(
      "padding-factor", po::value(&o.padding_factor)->default_value(8), "pad dictionary sizes to a multiple of this")(
      "min-len", po::value(&o.filter.min_len)->default_value(0),
      "drop training pairs with a side shorter than this (tokens)")(
      "max-len", po::value(&o.filter.max_len)->default_value(0),
      "drop training pairs with a side longer than this (tokens; 0: no limit)")(
      "max-len-ratio", po::value(&o.filter.max_len_ratio)->default_value(0.0),
      "drop training pairs whose length ratio exceeds this (0: no limit)");

  po::variables_map vm;
  po::store(po::command_line_parser(argc, argv).options(desc).run(), vm);
  if (vm.count("help")) {
    std::cout << desc << "\n";
    return 0;
  }
  po::notify(vm);
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
