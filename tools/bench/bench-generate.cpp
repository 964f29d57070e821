// bench-generate: translation speed of csan-generate's library path (sentences/s and
// target tokens/s, model loading excluded), by default beam 5, 64 sentences per batch,
// on a binarized split (e.g. a 1000-sentence toy test set).
//   bench-generate --path CKPT --data DIR [--gen-subset test --beam 5 --batch-size 64]
#include <ATen/Parallel.h>
#include <boost/program_options.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "toolkit/core/error.h"
#include "toolkit/generation/checkpoint_ensemble.h"
#include "toolkit/generation/generate_run.h"

namespace po = boost::program_options;

namespace {

int bench_main(int argc, char** argv) {
  csan::generation::GenerateOptions o;
  std::string path;
  int64_t repeats = 1;
  po::options_description options("bench-generate --path CKPT --data DIR [options]");
  options.add_options()("help,h", "show this help")("path", po::value<std::string>(&path), "checkpoint(s)")(
      "data", po::value<std::string>(&o.data_dir), "binarized data directory")(
      "gen-subset", po::value<std::string>(&o.gen_subset)->default_value("test"), "split to translate")(
      "beam", po::value<int64_t>(&o.search.beam)->default_value(5), "beam size")(
      "batch-size", po::value<int64_t>(&o.batch_size)->default_value(64), "sentences per batch")(
      "repeats", po::value<int64_t>(&repeats)->default_value(1), "timed runs (the best is reported)");
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, options), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw csan::Error(std::string(e.what()) + " (see bench-generate --help)");
  }
  if (vm.count("help") || path.empty() || o.data_dir.empty()) {
    std::cout << options;
    return vm.count("help") ? 0 : 1;
  }
  o.paths = csan::generation::split_paths(path);
  o.output_format = "plain";
  o.search.max_len_a = 1.2;
  o.search.max_len_b = 10;
  double best = 0;
  csan::generation::GenerateSummary summary;
  for (int64_t r = 0; r < repeats; ++r) {
    std::ostringstream out, log;
    summary = csan::generation::run_generate(o, out, log);
    if (r == 0 || summary.seconds < best) best = summary.seconds;
  }
  std::printf("bench-generate: %lld sentences, beam %lld, batch %lld, %d threads\n",
              static_cast<long long>(summary.sentences), static_cast<long long>(o.search.beam),
              static_cast<long long>(o.batch_size), at::get_num_threads());
  std::printf("  %.2f s  %.1f sentences/s  %.1f target tokens/s (%lld tokens)\n", best,
              double(summary.sentences) / best, double(summary.tokens) / best,
              static_cast<long long>(summary.tokens));
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return csan::run_main("bench-generate", bench_main, argc, argv); }
