// csan-toy-treebank: writes the seeded synthetic treebank of toolkit/data/toy_treebank.h
// as OUT_DIR/{train,dev,test}.conllu, the data of tools/experiments/tagger-table2.sh --quick.
#include <boost/program_options.hpp>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>

#include "toolkit/core/atomic_file.h"
#include "toolkit/core/error.h"
#include "toolkit/data/toy_treebank.h"

namespace po = boost::program_options;

namespace {

// Signed, because Boost would wrap "-5" into a huge unsigned value; capped because the
// treebank is built in memory.
int checked_sentences(const std::string& option, long long value) {
  constexpr long long kMost = 1000000;
  if (value < 1 || value > kMost)
    throw csan::Error("option '" + option + "' must be between 1 and " + std::to_string(kMost) + ", got " +
                      std::to_string(value));
  return static_cast<int>(value);
}

int toy_treebank_main(int argc, char** argv) {
  std::string out_dir;
  long long train = 300, dev = 60, test = 60, seed = 7;
  po::options_description described("csan-toy-treebank: write a seeded synthetic treebank (CoNLL-U)\nOptions");
  described.add_options()("help,h", "show this help")("out-dir", po::value(&out_dir)->required(),
                                                      "directory for {train,dev,test}.conllu")(
      "train", po::value(&train)->default_value(train), "training sentences")(
      "dev", po::value(&dev)->default_value(dev), "development sentences")(
      "test", po::value(&test)->default_value(test), "test sentences")("seed", po::value(&seed)->default_value(seed),
                                                                       "seed of the sentences (non-negative)");
  po::variables_map vm;
  po::store(po::command_line_parser(argc, argv).options(described).run(), vm);
  if (vm.count("help")) {
    std::cout << described << "\n";
    return 0;
  }
  po::notify(vm);
  if (seed < 0) throw csan::Error("option '--seed' must be non-negative, got " + std::to_string(seed));
  const int sizes[] = {checked_sentences("--train", train), checked_sentences("--dev", dev),
                       checked_sentences("--test", test)};
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec) throw csan::Error(out_dir + ": cannot create directory: " + ec.message());
  // One generator for the three splits, so that they differ; every fifth sentence is long
  // (several chunks of the convatt protocol).
  csan::data::ToyTreebank generator(static_cast<uint64_t>(seed));
  const char* names[] = {"train", "dev", "test"};
  for (int i = 0; i < 3; ++i)
    csan::write_file_atomically(out_dir + "/" + names[i] + ".conllu", generator.conllu(sizes[i], 5));
  std::fprintf(stderr, "csan-toy-treebank: wrote %s: %d / %d / %d sentences (train / dev / test), seed %lld\n",
               out_dir.c_str(), sizes[0], sizes[1], sizes[2], seed);
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return csan::run_main("csan-toy-treebank", toy_treebank_main, argc, argv); }
