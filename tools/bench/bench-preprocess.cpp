// Throughput of encode + binarize (SentencePiece pieces -> dictionary ids -> .bin/.idx),
// the part of csan-preprocess that scales with the corpus. Prints lines/second.
//
//   bench-preprocess [--spm-model M] [--lines 1000000] [--workers 2] [--input FILE]
//
// Input lines are the Multi30k English training sentences repeated (or toy-corpus
// sentences when that file is absent); without --spm-model an 8000-piece unigram model
// is trained on them first (not timed).
#include <unistd.h>

#include <boost/program_options.hpp>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <sstream>

#include "toolkit/core/error.h"
#include "toolkit/core/text_file.h"
#include "toolkit/data/binarizer.h"
#include "toolkit/text/dictionary.h"
#include "toolkit/text/sentencepiece.h"
#include "toolkit/text/toy_corpus.h"

namespace po = boost::program_options;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

double cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// ../shared beside the source tree, found from this file's path.
std::string default_input() {
  return (fs::path(__FILE__).parent_path() / "../../../shared/data/multi30k/train.en").lexically_normal().string();
}

std::vector<std::string> base_lines(const std::string& input) {
  if (fs::exists(input)) return csan::read_lines(input);
  csan::text::ToyCorpusOptions o;
  o.train = 30000;
  return csan::text::generate_toy_corpus(o).splits[0].source;
}

int body(int argc, char** argv) {
  std::string spm_model, input = default_input();
  size_t lines = 1000000;
  int workers = 2;
  po::options_description desc("bench-preprocess options");
  desc.add_options()("help,h", "show this help")("spm-model", po::value(&spm_model),
                                                 "SentencePiece model (default: train one)")(
      "input", po::value(&input)->default_value(input), "text whose lines are repeated")(
      "lines", po::value(&lines)->default_value(lines), "lines to encode and binarize")(
      "workers", po::value(&workers)->default_value(workers), "threads");
  po::variables_map vm;
  po::store(po::command_line_parser(argc, argv).options(desc).run(), vm);
  if (vm.count("help")) {
    std::ostringstream help;
    help << desc;
    std::printf("%s\n", help.str().c_str());
    return 0;
  }
  po::notify(vm);

  auto base = base_lines(input);
  if (base.empty()) throw csan::Error(input + ": no lines");
  std::vector<std::string> corpus;
  corpus.reserve(lines);
  for (size_t i = 0; i < lines; ++i) corpus.push_back(base[i % base.size()]);

  auto model = spm_model.empty() ? [&] {
    csan::text::SentencePieceTrainOptions o;
    o.vocab_size = 8000;
    return csan::text::SentencePieceModel::train({&base}, o);
  }() : csan::text::SentencePieceModel::load(spm_model);
  // The dictionary: every piece of the base text, as csan-preprocess would build it.
  auto base_pieces = csan::data::encode_corpus(model, base, workers);
  auto dict = csan::data::build_dictionary({&base_pieces}, {}, 0, -1, 8);

  std::string prefix = (fs::temp_directory_path() / ("csan_bench_preprocess_" + std::to_string(::getpid()))).string();
  auto start = Clock::now();
  const double cpu_start = cpu_seconds();
  auto split = csan::data::encode_and_binarize(model, dict, corpus, workers);
  double encode_s = seconds_since(start);
  csan::data::write_dataset(prefix, split, static_cast<size_t>(dict.size()));
  double total_s = seconds_since(start);
  double cpu_s = cpu_seconds() - cpu_start;
  fs::remove(prefix + ".bin");
  fs::remove(prefix + ".idx");

  std::printf("bench-preprocess: %zu lines, %lld tokens, %d workers, spm vocab %d, dict %d\n", lines,
              static_cast<long long>(split.tokens()), workers, model.vocab_size(), dict.size());
  std::printf("encode+binarize: %.2f s (write %.2f s)\n", total_s, total_s - encode_s);
  std::printf("lines/second: %.0f\n", static_cast<double>(lines) / total_s);
  // On a shared machine wall time includes waiting for a core; CPU time does not.
  std::printf("cpu: %.2f s, lines per cpu-second: %.0f\n", cpu_s, static_cast<double>(lines) / cpu_s);
  std::printf("tokens/second: %.0f\n", static_cast<double>(split.tokens()) / total_s);
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return csan::run_main("bench-preprocess", body, argc, argv); }
