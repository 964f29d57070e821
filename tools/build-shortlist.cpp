// build-shortlist: a lexical shortlist for csan-generate --shortlist, from the
// co-occurrences of the binarized training data (toolkit/generation/shortlist.h).
//   build-shortlist --data DATA_BIN -s de -t en [--subset train] [--top-k 50] [--frequent 100] --output FILE
#include <boost/program_options.hpp>
#include <iostream>
#include <string>

#include "toolkit/core/error.h"
#include "toolkit/generation/shortlist.h"

namespace po = boost::program_options;

namespace {

int build_main(int argc, char** argv) {
  std::string data, subset, src, tgt, output;
  csan::generation::ShortlistOptions o;
  po::options_description options("build-shortlist --data DIR -s SRC -t TGT --output FILE [options]");
  options.add_options()("help,h", "show this help")("data", po::value(&data), "binarized data (csan-preprocess)")(
      "subset", po::value(&subset)->default_value("train"), "split to count co-occurrences in")(
      "source-lang,s", po::value(&src), "source language")("target-lang,t", po::value(&tgt), "target language")(
      "top-k", po::value(&o.top_k)->default_value(o.top_k), "candidate target tokens per source token")(
      "frequent", po::value(&o.frequent)->default_value(o.frequent), "most frequent target tokens, always kept")(
      "output", po::value(&output), "shortlist file to write");
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, options), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw csan::Error(std::string(e.what()) + " (see build-shortlist --help)");
  }
  if (vm.count("help")) {
    std::cout << options;
    return 0;
  }
  if (data.empty()) throw csan::Error("missing --data DIR");
  if (src.empty() || tgt.empty()) throw csan::Error("missing --source-lang/--target-lang");
  if (output.empty()) throw csan::Error("missing --output FILE");
  if (o.top_k < 1) throw csan::Error("--top-k: must be at least 1");
  if (o.frequent < 0) throw csan::Error("--frequent: must not be negative");
  const auto shortlist = csan::generation::build_shortlist(data, subset, src, tgt, o);
  shortlist.save(output);
  std::cerr << "build-shortlist: " << output << " (top " << o.top_k << " per source token, "
            << shortlist.frequent().size() << " frequent target tokens)\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return csan::run_main("build-shortlist", build_main, argc, argv); }
