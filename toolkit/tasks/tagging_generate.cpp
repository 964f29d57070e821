#include "toolkit/tasks/tagging_generate.h"

#include <ATen/Parallel.h>

#include <boost/program_options.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "toolkit/core/atomic_file.h"
#include "toolkit/core/error.h"
#include "toolkit/tasks/tagger.h"

namespace fs = std::filesystem;

namespace csan::tasks {

namespace {

data::ConllCorpus read_input(const std::string& input) {
  if (input != "-") return data::read_conllu(input);
  std::ostringstream text;
  text << std::cin.rdbuf();
  return data::parse_conllu(text.str(), "<stdin>");
}

}  // namespace

std::unique_ptr<boost::program_options::options_description> tagging_generate_options(GenerateOptions& o) {
  namespace po = boost::program_options;
  auto section = std::make_unique<po::options_description>(
      "Tagging checkpoints: csan-generate --path CKPT[:CKPT...] --input FILE.conllu|- [options]");
  section->add_options()("input", po::value<std::string>(&o.input), "CoNLL-U file to tag, or - for stdin")(
      "batch-size", po::value<int64_t>(&o.batch_size)->default_value(64), "chunks per batch (0: all at once)")(
      "results-path", po::value<std::string>(&o.results_path), "write DIR/generate-input.conllu instead of stdout");
  return section;
}

void generate_tags(const GenerateOptions& options, checkpoint::CheckpointReader& first, std::ostream& out,
                   std::ostream& log) {
  if (!options.data_dir.empty() || options.input.empty())
    throw Error("a tagging checkpoint tags CoNLL-U: give --input FILE.conllu (or - for stdin), not --data");
  if (options.batch_size < 0) throw Error("--batch-size must not be negative");
  Tagger tagger({options.paths, "cpu", 0}, &first);
  const data::ConllCorpus corpus = read_input(options.input);
  const auto start = std::chrono::steady_clock::now();
  const TaggedConllu tagged = tagger.tag_conllu(corpus, options.batch_size);
  const std::string& text = tagged.text;
  const int64_t words = tagged.words, correct = tagged.correct, gold = tagged.gold;
  const data::TagColumn column = tagger.column();
  if (options.results_path.empty()) {
    out << text;
  } else {
    fs::create_directories(options.results_path);
    write_file_atomically((fs::path(options.results_path) / "generate-input.conllu").string(), text);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  char line[256];
  std::snprintf(line, sizeof line, "tagged %zu sentences, %lld words (%s) in %.2f s (%.0f words/s, %d CPU thread%s)",
                corpus.sentences.size(), static_cast<long long>(words), data::tag_column_name(column).c_str(), seconds,
                seconds > 0 ? double(words) / seconds : 0.0, at::get_num_threads(),
                at::get_num_threads() == 1 ? "" : "s");
  log << line;
  if (gold == words && words > 0) {
    std::snprintf(line, sizeof line, "; accuracy against the input's tags %.2f",
                  100.0 * double(correct) / double(words));
    log << line;
  }
  log << "\n";
}

}  // namespace csan::tasks
