// bench-generate: translation speed of csan-generate's library path (sentences/s and
// target tokens/s; model loading excluded), by default beam 5, 64 sentences per batch,
// fairseq-generate's length limit (max_len_a 0, max_len_b 200).
//   bench-generate --path CKPT --data DIR [--gen-subset test --beam 5 --batch-size 64 --repeats 3]
//                  [--profile trace.json]
//
// The setup (small config on Multi30k test2016, 1,000 sentences), with a model
// TRAINED briefly: random weights rarely emit </s>, so every sentence would run to the
// length limit and the figure would say nothing about real decoding.
//   D=/work/shared/data/multi30k
//   csan-preprocess -s en -t de --trainpref $D/train --validpref $D/val --testpref $D/test2016
//       --joined-dictionary --spm-vocab-size 8000 --destdir /tmp/m30k --workers 1
//   OMP_NUM_THREADS=2 csan-train recipes/bench-small.yaml --data /tmp/m30k --source-lang en
//       --target-lang de --save-dir /tmp/m30k-ckpt --max-update 250 --lr 1e-3
//       --set lr_scheduler.warmup_updates=100 --set optimization.clip_norm=1.0
//   OMP_NUM_THREADS=2 bench-generate --path /tmp/m30k-ckpt/checkpoint_last.pt --data /tmp/m30k --repeats 3
// Compare two builds (before/after) by running their bench-generate alternately in one
// command and quoting the ratio.
#include <ATen/Parallel.h>
#include <torch/csrc/autograd/profiler_legacy.h>
#include <boost/program_options.hpp>

#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>

#include "toolkit/core/allocator_tuning.h"
#include "toolkit/core/error.h"
#include "toolkit/generation/checkpoint_ensemble.h"
#include "toolkit/generation/generate_run.h"

namespace po = boost::program_options;

namespace {

int bench_main(int argc, char** argv) {
  csan::generation::GenerateOptions o;
  std::string path;
  int64_t repeats = 1;
  std::string profile;
  po::options_description options("bench-generate --path CKPT --data DIR [options]");
  options.add_options()("help,h", "show this help")("path", po::value<std::string>(&path), "checkpoint(s)")(
      "data", po::value<std::string>(&o.data_dir), "binarized data directory")(
      "gen-subset", po::value<std::string>(&o.gen_subset)->default_value("test"), "split to translate")(
      "source-lang", po::value<std::string>(&o.source_lang), "source language (default: the checkpoint's)")(
      "target-lang", po::value<std::string>(&o.target_lang), "target language (default: the checkpoint's)")(
      "beam", po::value<int64_t>(&o.search.beam)->default_value(5), "beam size")(
      "batch-size", po::value<int64_t>(&o.batch_size)->default_value(64), "sentences per batch")(
      "max-len-a", po::value<double>(&o.search.max_len_a)->default_value(0.0), "length limit a * source + b")(
      "max-len-b", po::value<int64_t>(&o.search.max_len_b)->default_value(200), "length limit a * source + b")(
      "parallel-batches", po::value<int64_t>(&o.parallel_batches)->default_value(0),
      "batches translated at once (0: one per thread; 1: one batch on all threads)")(
      "repeats", po::value<int64_t>(&repeats)->default_value(1), "timed runs (the best is reported)")(
      "profile", po::value<std::string>(&profile), "then translate once more into this Chrome trace");
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
  if (repeats < 1) throw csan::Error("--repeats: must be at least 1");
  csan::core::keep_large_allocations_mapped();  // as csan-generate
  o.paths = csan::generation::split_paths(path);
  o.output_format = "plain";
  double best = 0;
  csan::generation::GenerateSummary summary;
  for (int64_t r = 0; r < repeats; ++r) {
    std::ostringstream out, log;
    summary = csan::generation::run_generate(o, out, log);
    if (r == 0 || summary.seconds < best) best = summary.seconds;
  }
  if (!profile.empty()) {
    std::ostringstream out, log;
    torch::autograd::profiler::RecordProfile recording(profile);
    csan::generation::run_generate(o, out, log);
  }
  std::printf("bench-generate: %lld sentences, beam %lld, batch %lld, max_len %g*src+%lld, %d threads\n",
              static_cast<long long>(summary.sentences), static_cast<long long>(o.search.beam),
              static_cast<long long>(o.batch_size), o.search.max_len_a, static_cast<long long>(o.search.max_len_b),
              at::get_num_threads());
  std::printf("  %.2f s  %.1f sentences/s  %.1f target tokens/s (%lld tokens)\n", best,
              double(summary.sentences) / best, double(summary.tokens) / best,
              static_cast<long long>(summary.tokens));
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return csan::run_main("bench-generate", bench_main, argc, argv); }
