// csan-toy-corpus: writes the seeded synthetic parallel corpus described in
// toolkit/text/toy_corpus.h (train/valid/test splits, one sentence per line).
#include <boost/program_options.hpp>

#include <cstdio>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "toolkit/core/error.h"
#include "toolkit/text/toy_corpus.h"

namespace po = boost::program_options;

namespace {

// Sizes are read as signed numbers because Boost would silently wrap "-5" into a huge
// unsigned value; the cap keeps a typo from running out of memory.
size_t checked_count(const std::string& option, long long value, long long minimum, long long maximum) {
  if (value < minimum || value > maximum)
    throw csan::Error("option '" + option + "' must be between " + std::to_string(minimum) + " and " +
                      std::to_string(maximum) + ", got " + std::to_string(value));
  return static_cast<size_t>(value);
}

void check_language_name(const std::string& option, const std::string& name) {
  if (name.empty() || name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") !=
                          std::string::npos)
    throw csan::Error("option '" + option + "': '" + name + "' is not a language name (letters, digits, '_', '-')");
}

int toy_corpus_main(int argc, char** argv) {
  csan::text::ToyCorpusOptions options;
  std::string out_dir, source_lang, target_lang, second_target_lang;
  uint64_t second_target_seed = 0;
  bool alignments = false;
  long long train = 20000, valid = 500, test = 500, max_words = 20;
  po::options_description described("csan-toy-corpus: write a seeded synthetic parallel corpus\nOptions");
  described.add_options()
      ("help,h", "show this help")
      ("out-dir", po::value(&out_dir)->required(), "directory for {train,valid,test}.{SRC,TGT}")
      ("train", po::value(&train)->default_value(train), "training sentence pairs")
      ("valid", po::value(&valid)->default_value(valid), "validation sentence pairs")
      ("test", po::value(&test)->default_value(test), "test sentence pairs")
      ("seed", po::value(&options.seed)->default_value(options.seed), "seed of the lexicon and the sentences")
      ("source-lang", po::value(&source_lang)->default_value("src"), "source file suffix")
      ("target-lang", po::value(&target_lang)->default_value("tgt"), "target file suffix")
      ("max-words", po::value(&max_words)->default_value(max_words),
       "longest source sentence in tokens (at least 3)")
      ("second-target-lang", po::value(&second_target_lang),
       "also this target language (multilingual toy): writes SPLIT.SRC-TGT.{SRC,TGT} and "
       "SPLIT.SRC-TGT2.{SRC,TGT2} instead of SPLIT.{SRC,TGT}")
      ("second-target-seed", po::value(&second_target_seed),
       "seed of the second target language's words (default: --seed + 1)")
      ("alignments", po::bool_switch(&alignments),
       "also write {train,valid,test}.align: the true word alignment of each pair (i-j, 0-based; "
       "not with --second-target-lang)");
  po::variables_map vm;
  po::store(po::command_line_parser(argc, argv).options(described).run(), vm);
  if (vm.count("help")) {
    std::cout << described << "\n";
    return 0;
  }
  po::notify(vm);
  check_language_name("--source-lang", source_lang);
  check_language_name("--target-lang", target_lang);
  if (source_lang == target_lang)
    throw csan::Error("option '--target-lang' must differ from '--source-lang' ('" + source_lang + "')");
  if (!second_target_lang.empty()) {
    check_language_name("--second-target-lang", second_target_lang);
    const std::vector<std::pair<std::string, std::string>> names = {
        {"--source-lang", source_lang}, {"--target-lang", target_lang}, {"--second-target-lang", second_target_lang}};
    for (const auto& [option, name] : names)
      if (name.find('-') != std::string::npos)
        throw csan::Error("option '" + option + "': '" + name + "' names a language pair's files, so no '-'");
    if (second_target_lang == source_lang || second_target_lang == target_lang)
      throw csan::Error("option '--second-target-lang' must differ from the other languages ('" +
                        second_target_lang + "')");
    options.second_target_seed = vm.count("second-target-seed") ? second_target_seed : options.seed + 1;
    if (options.second_target_seed == 0 || options.second_target_seed == options.seed)
      throw csan::Error("option '--second-target-seed' must be non-zero and differ from --seed");
  } else if (vm.count("second-target-seed")) {
    throw csan::Error("option '--second-target-seed' needs --second-target-lang");
  }
  constexpr long long kMostSentences = 10000000;  // all are held in memory
  options.train = checked_count("--train", train, 1, kMostSentences);
  options.valid = checked_count("--valid", valid, 0, kMostSentences);
  options.test = checked_count("--test", test, 0, kMostSentences);
  options.max_words = checked_count("--max-words", max_words, 3, 1000);

  const auto corpus = csan::text::generate_toy_corpus(options);
  if (second_target_lang.empty()) {
    csan::text::write_toy_corpus(corpus, out_dir, source_lang, target_lang, alignments);
  } else {
    if (alignments) throw csan::Error("option '--alignments' is for one target language, not with '--second-target-lang'");
    csan::text::write_multilingual_toy_corpus(corpus, out_dir, source_lang, target_lang, second_target_lang);
  }
  std::fprintf(stderr, "csan-toy-corpus: wrote %s: %s\n", out_dir.c_str(),
               csan::text::describe_toy_corpus(corpus, options).c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return csan::run_main("csan-toy-corpus", toy_corpus_main, argc, argv); }
