// csan-generate --path CKPT[:CKPT2...] (--data DIR [--gen-subset test] | --input FILE|-)
// [search options]: parses the options and calls the generation library.
#include <boost/program_options.hpp>
#include <iostream>
#include <string>
#include <vector>

#include "toolkit/core/allocator_tuning.h"
#include "toolkit/core/checked_output.h"
#include "toolkit/core/error.h"
#include "toolkit/generation/generate_run.h"
#include "toolkit/generation/loaded_ensemble.h"
#include "toolkit/nn/precision.h"
#include "toolkit/tasks/generate.h"

namespace po = boost::program_options;

namespace {

int generate_main(int argc, char** argv) {
  csan::core::keep_large_allocations_mapped();  // decoding steps reuse their buffers instead of page-faulting
  csan::generation::GenerateOptions o;
  auto& s = o.search;
  std::string paths, precision;
  po::options_description io("csan-generate --path CKPT[:CKPT...] (--data DIR | --input FILE|-) [options]");
  io.add_options()("help,h", "show this help")("path", po::value<std::string>(&paths),
                                               "checkpoint(s); several separated by ':' form an ensemble")(
      "data", po::value<std::string>(&o.data_dir), "binarized data directory (csan-preprocess output)")(
      "gen-subset", po::value<std::string>(&o.gen_subset)->default_value("test"), "split of --data to translate")(
      "input", po::value<std::string>(&o.input), "raw text file to translate, or - for stdin (line by line)")(
      "source-lang,s", po::value<std::string>(&o.source_lang), "source language (default: the checkpoint's)")(
      "target-lang,t", po::value<std::string>(&o.target_lang), "target language (default: the checkpoint's)")(
      "batch-size", po::value<int64_t>(&o.batch_size)->default_value(64), "max sentences per batch (0: no limit)")(
      "max-tokens", po::value<int64_t>(&o.max_tokens)->default_value(0), "max source tokens per batch (0: no limit)")(
      "parallel-batches", po::value<int64_t>(&o.parallel_batches)->default_value(0),
      "batches translated at once, each on its share of the threads (0: one per thread; 1: one batch on all)")(
      "buffer-size", po::value<int64_t>(&o.buffer_size)->default_value(0),
      "raw input lines read before translating (0: 1 at a terminal, else 16 batches or 2 per thread)")(
      "output-format", po::value<std::string>(&o.output_format)->default_value("fairseq"),
      "fairseq (S-/T-/H-/D-/P- lines and a summary) or plain (one hypothesis per line)")(
      "results-path", po::value<std::string>(&o.results_path), "write DIR/generate-SUBSET.txt instead of stdout")(
      "precision", po::value<std::string>(&precision)->default_value("fp32"),
      "fp32, bf16 (bf16 products, fp32 scores), int8 (CPU: dynamically quantized projections) or fp16 (GPU)")(
      "cpu", po::bool_switch(&o.cpu), "decode on the CPU even when a CUDA GPU is available")(
      "threads", po::value<int64_t>(&o.threads)->default_value(0),
      "CPU threads (0: OMP_NUM_THREADS when set, else every usable CPU)")(
      "quantize-skip", po::value<std::vector<std::string>>(&o.precision.quantize_skip)->multitoken(),
      "layers kept fp32 under bf16/int8 (parameter-name prefixes, e.g. decoder.output_projection)")(
      "shortlist", po::value<std::string>(&o.shortlist),
      "lexical shortlist file (build-shortlist): the output layer scores only the batch's candidates");
  po::options_description search("Search");
  search.add_options()("beam", po::value<int64_t>(&s.beam)->default_value(5), "beam size")(
      "nbest", po::value<int64_t>(&s.nbest)->default_value(1), "hypotheses to print per sentence")(
      "lenpen", po::value<double>(&s.lenpen)->default_value(1.0), "score = log p / length^lenpen")(
      "max-len-a", po::value<double>(&s.max_len_a)->default_value(0.0), "max length = a * source length + b")(
      "max-len-b", po::value<int64_t>(&s.max_len_b)->default_value(200), "see --max-len-a")(
      "min-len", po::value<int64_t>(&s.min_len)->default_value(1), "minimum output length (tokens before </s>)")(
      "unkpen", po::value<double>(&s.unkpen)->default_value(0.0), "penalty subtracted from <unk>'s log-probability")(
      "no-repeat-ngram-size", po::value<int64_t>(&s.no_repeat_ngram_size)->default_value(0),
      "never repeat an n-gram of this size (0: off)")("prefix-size",
                                                      po::value<int64_t>(&s.prefix_size)->default_value(0),
                                                      "force the first N reference tokens (--data only)")(
      "sampling", po::bool_switch(&s.sampling), "sample instead of beam search (--beam samples per sentence)")(
      "sampling-topk", po::value<int64_t>(&s.sampling_topk)->default_value(-1), "sample among the k best (-1: all)")(
      "sampling-topp", po::value<double>(&s.sampling_topp)->default_value(-1.0),
      "sample from the smallest set with probability >= p (-1: all)")(
      "temperature", po::value<double>(&s.temperature)->default_value(1.0), "divide logits by this")(
      "seed", po::value<uint64_t>(&s.seed)->default_value(1), "sampling seed");
  po::options_description all;
  all.add(io).add(search);

  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, all), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw csan::Error(std::string(e.what()) + " (see csan-generate --help)");
  }
  if (vm.count("help")) {
    std::cout << all;
    return 0;
  }
  if (!vm.count("path")) throw csan::Error("missing --path CKPT (a checkpoint written by csan-train)");
  o.paths = csan::generation::split_paths(paths);
  o.precision.precision = csan::nn::parse_precision(precision, "--precision");
  // Every write to stdout is checked: a full disk is an error, a closed pipe a quiet stop.
  csan::CheckedOutput out;
  csan::tasks::run_generate(o, out.stream(), std::cerr);
  out.close();
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return csan::run_main("csan-generate", generate_main, argc, argv); }
