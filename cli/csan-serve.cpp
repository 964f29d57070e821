// csan-serve --path CKPT[:CKPT...] [--path ... --name ...] [options]: an HTTP server
// that keeps the models loaded and batches concurrent requests. Parses the options and
// calls the library (toolkit/serve/).
#include <boost/program_options.hpp>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "toolkit/core/allocator_tuning.h"
#include "toolkit/core/error.h"
#include "toolkit/generation/loaded_ensemble.h"
#include "toolkit/nn/precision.h"
#include "toolkit/serve/serve_command.h"

namespace po = boost::program_options;

namespace {

int serve_main(int argc, char** argv) {
  csan::core::keep_large_allocations_mapped();  // decoding steps reuse their buffers instead of page-faulting
  csan::serve::ServeCommand c;
  auto& s = c.server;
  std::vector<std::string> paths, names, source_langs, target_langs;
  std::string precision, device;
  int64_t threads = 0, max_sentences = 0, max_sentence_bytes = 0, max_body = 0, max_queue = 0, max_connections = 0;
  std::string shortlist;
  po::options_description options(
      "csan-serve --path CKPT[:CKPT...] [--path CKPT2 ...] [--name NAME ...] [--port 8080] [options]\n"
      "Serves POST /translate, GET /models, /health, /metrics and a web page at /");
  options.add_options()("help,h", "show this help")(
      "path", po::value<std::vector<std::string>>(&paths),
      "a model to serve: checkpoint(s), several separated by ':' forming an ensemble; repeat for more models")(
      "name", po::value<std::vector<std::string>>(&names),
      "the name of each --path, in order (default: the first checkpoint's file name without .pt)")(
      "source-lang", po::value<std::vector<std::string>>(&source_langs),
      "the source language of each --path, in order (a multilingual checkpoint needs one)")(
      "target-lang", po::value<std::vector<std::string>>(&target_langs),
      "the target language of each --path, in order (a multilingual checkpoint needs one)")(
      "host", po::value<std::string>(&s.host)->default_value("127.0.0.1"), "address to listen on (0.0.0.0: all)")(
      "port", po::value<int>(&s.port)->default_value(8080), "port to listen on (0: any free one; the log says which)")(
      "precision", po::value<std::string>(&precision)->default_value("fp32"),
      "fp32, bf16, int8 (CPU) or fp16 (GPU); an inference-only checkpoint decodes in its own")(
      "shortlist", po::value<std::string>(&shortlist), "lexical shortlist file (build-shortlist), for every model")(
      "device", po::value<std::string>(&device)->default_value("cpu"), "cpu or cuda")(
      "threads", po::value<int64_t>(&threads)->default_value(0),
      "CPU threads (0: OMP_NUM_THREADS when set, else every usable CPU)")(
      "max-batch-tokens", po::value<int64_t>(&s.queue.max_batch_tokens)->default_value(4096),
      "source tokens a batch gathers from the queue before it starts")(
      "max-wait-ms", po::value<int64_t>(&s.queue.max_wait_ms)->default_value(5),
      "how long the oldest waiting request waits for others to batch with")(
      "batch-size", po::value<int64_t>(&s.batch_size)->default_value(64),
      "sentences per decoding batch inside a gathered batch (as csan-generate's)")(
      "max-queue", po::value<int64_t>(&max_queue)->default_value(1024),
      "requests waiting per model; more are refused with 503 and Retry-After")(
      "max-body-bytes", po::value<int64_t>(&max_body)->default_value(1 << 20), "larger request bodies get 413")(
      "max-sentences", po::value<int64_t>(&max_sentences)->default_value(256), "sentences per request (more: 413)")(
      "max-sentence-bytes", po::value<int64_t>(&max_sentence_bytes)->default_value(4096),
      "bytes per sentence (more: 413)")("timeout-ms", po::value<int64_t>(&s.timeout_ms)->default_value(30000),
                                        "a request not answered within this gets 504")(
      "max-connections", po::value<int64_t>(&max_connections)->default_value(1024),
      "connections served at once, each on its own thread; more wait")(
      "read-timeout", po::value<int64_t>(&s.read_timeout_s)->default_value(5),
      "seconds a client may stay silent in the middle of a request")(
      "release-memory-ms", po::value<int64_t>(&s.queue.release_memory_ms)->default_value(0),
      "give freed memory back to the system at most this often: after a batch, or when idle this long (0: never)")(
      "access-log", po::value<std::string>(&c.access_log), "append the access log to this file (default: stderr)")(
      "warm-up", po::value<std::vector<std::string>>(&s.warm_up_files),
      "translate this file's lines once at start, as one batch, before serving (one file for every model, or one "
      "per --path): the memory is then taken at once and stays flat under traffic whose batches are no larger "
      "(give the longest sentences of the traffic, as many as arrive together)");
  try {
    po::variables_map vm;
    po::store(po::command_line_parser(argc, argv).options(options).run(), vm);
    po::notify(vm);
    if (vm.count("help")) {
      std::cout << options;
      return 0;
    }
  } catch (const po::error& e) {
    throw csan::Error(std::string(e.what()) + " (see csan-serve --help)");
  }
  if (paths.empty()) throw csan::Error("missing --path CKPT (a checkpoint written by csan-train)");
  if (!names.empty() && names.size() != paths.size())
    throw csan::Error("--name: " + std::to_string(names.size()) + " names for " + std::to_string(paths.size()) +
                      " --path (give one per --path, or none)");
  const std::pair<const char*, const std::vector<std::string>*> languages[] = {{"--source-lang", &source_langs},
                                                                               {"--target-lang", &target_langs}};
  for (const auto& [option, values] : languages)
    if (!values->empty() && values->size() != paths.size())
      throw csan::Error(std::string(option) + ": " + std::to_string(values->size()) + " languages for " +
                        std::to_string(paths.size()) + " --path (give one per --path, or none)");
  for (int64_t* v : {&max_sentences, &max_sentence_bytes, &max_body, &max_queue, &max_connections})
    if (*v < 1) throw csan::Error("--max-*: limits must be at least 1");
  s.request.max_sentences = static_cast<size_t>(max_sentences);
  s.request.max_sentence_bytes = static_cast<size_t>(max_sentence_bytes);
  s.max_body_bytes = static_cast<size_t>(max_body);
  s.queue.max_queue = static_cast<size_t>(max_queue);
  s.max_connections = static_cast<size_t>(max_connections);
  for (size_t i = 0; i < paths.size(); ++i) {
    csan::serve::ModelSpec model;
    model.translator.paths = csan::generation::split_paths(paths[i]);
    if (model.translator.paths.empty()) throw csan::Error("--path: no checkpoint given");
    model.translator.precision.precision = csan::nn::parse_precision(precision, "--precision");
    model.translator.shortlist = shortlist;
    model.translator.device = device;
    model.translator.threads = i == 0 ? threads : 0;  // process-wide: set once
    if (!source_langs.empty()) model.translator.source_lang = source_langs[i];
    if (!target_langs.empty()) model.translator.target_lang = target_langs[i];
    model.name = names.empty() ? std::filesystem::path(model.translator.paths[0]).stem().string() : names[i];
    c.models.push_back(std::move(model));
  }
  csan::serve::run_serve(c, std::cerr);
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return csan::run_main("csan-serve", serve_main, argc, argv); }
