#include "toolkit/text/toy_corpus.h"

#include <cstdio>
#include <filesystem>
#include <unordered_set>

#include "toolkit/core/atomic_file.h"
#include "toolkit/core/error.h"
#include "toolkit/core/splitmix64.h"
#include "toolkit/text/toy_grammar.h"
#include "toolkit/text/toy_lexicon.h"

namespace csan::text {

namespace {

constexpr size_t kShortestSentence = 3;  // pronoun, intransitive verb, "."
// Draws in a row that may yield nothing new before the options are judged impossible.
constexpr size_t kMaxFruitlessDraws = 200000;

size_t count_tokens(const std::string& line) {
  size_t tokens = line.empty() ? 0 : 1;
  for (char c : line) tokens += c == ' ';
  return tokens;
}

void add_types(const std::vector<std::string>& lines, std::unordered_set<std::string>& types) {
  for (const auto& line : lines) {
    size_t start = 0;
    while (start <= line.size()) {
      size_t end = line.find(' ', start);
      if (end == std::string::npos) end = line.size();
      types.insert(line.substr(start, end - start));
      start = end + 1;
    }
  }
}

double mean_length(const std::vector<ToySplit>& splits, bool source) {
  size_t tokens = 0, lines = 0;
  for (const auto& split : splits)
    for (const auto& line : source ? split.source : split.target) {
      tokens += count_tokens(line);
      ++lines;
    }
  return lines ? static_cast<double>(tokens) / static_cast<double>(lines) : 0.0;
}

size_t overlap(const ToySplit& a, const ToySplit& b) {
  std::unordered_set<std::string> seen(a.source.begin(), a.source.end());
  size_t shared = 0;
  for (const auto& line : b.source) shared += seen.count(line);
  return shared;
}

}  // namespace

ToyCorpus generate_toy_corpus(const ToyCorpusOptions& options) {
  if (options.max_words < kShortestSentence)
    throw Error("toy corpus: max_words must be at least " + std::to_string(kShortestSentence) + ", got " +
                std::to_string(options.max_words));
  const ToyLexicon lexicon = ToyLexicon::generate(options.seed);
  const ToyLexicon second = options.second_target_seed == 0
                                ? ToyLexicon()
                                : lexicon.with_targets_of(ToyLexicon::generate(options.second_target_seed));
  core::SplitMix64 random = core::SplitMix64(options.seed ^ 0x746f792d73656e74ULL).fork(0);  // "toy-sent"
  std::unordered_set<std::string> used;  // source sentences already in some split

  auto draw_split = [&](const std::string& name, size_t count) {
    ToySplit split{name, {}, {}, {}, {}};
    size_t fruitless = 0;
    while (split.source.size() < count) {
      ToySentence sentence = sample_toy_sentence(lexicon, random);
      std::vector<std::string> source = render_toy_source(lexicon, sentence);
      std::string line = join_tokens(source);
      if (source.size() > options.max_words || !used.insert(line).second) {
        if (++fruitless == kMaxFruitlessDraws)
          throw Error("toy corpus: only " + std::to_string(used.size()) + " distinct sentences of at most " +
                      std::to_string(options.max_words) + " tokens could be drawn, " +
                      std::to_string(options.train + options.valid + options.test) +
                      " requested; raise the word limit or ask for fewer sentences");
        continue;
      }
      fruitless = 0;
      split.source.push_back(std::move(line));
      split.target.push_back(join_tokens(render_toy_target(lexicon, sentence)));
      if (options.second_target_seed != 0)
        split.second_target.push_back(join_tokens(render_toy_target(second, sentence)));
      split.alignment.push_back(pharaoh_line(toy_word_alignment(lexicon, sentence)));
    }
    return split;
  };

  // Test first: the evaluation data must not depend on how much training data is asked for.
  ToySplit test = draw_split("test", options.test);
  ToySplit valid = draw_split("valid", options.valid);
  ToySplit train = draw_split("train", options.train);

  ToyCorpus corpus;
  corpus.splits = {std::move(train), std::move(valid), std::move(test)};
  std::unordered_set<std::string> source_types, target_types;
  for (const auto& split : corpus.splits) {
    add_types(split.source, source_types);
    add_types(split.target, target_types);
  }
  corpus.source_types = source_types.size();
  corpus.target_types = target_types.size();
  corpus.source_mean_length = mean_length(corpus.splits, true);
  corpus.target_mean_length = mean_length(corpus.splits, false);
  return corpus;
}

namespace {

void create_output_directory(const std::string& dir) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error || !std::filesystem::is_directory(dir))
    throw Error::at(dir, 0, "cannot create output directory" + (error ? ": " + error.message() : std::string()));
}

void write_lines(const std::string& path, const std::vector<std::string>& lines) {
  AtomicFile file(path);
  for (const auto& line : lines) {
    file.write(line);
    file.write("\n");
  }
  file.commit();
}

}  // namespace

void write_multilingual_toy_corpus(const ToyCorpus& corpus, const std::string& dir, const std::string& source_lang,
                                   const std::string& target_lang, const std::string& second_target_lang) {
  create_output_directory(dir);
  for (const auto& split : corpus.splits) {
    if (split.second_target.size() != split.source.size())
      throw Error("toy corpus: no second target language (generate it with a second target seed)");
    const std::string first = dir + "/" + split.name + "." + source_lang + "-" + target_lang + ".";
    const std::string other = dir + "/" + split.name + "." + source_lang + "-" + second_target_lang + ".";
    write_lines(first + source_lang, split.source);
    write_lines(first + target_lang, split.target);
    write_lines(other + source_lang, split.source);
    write_lines(other + second_target_lang, split.second_target);
  }
}

void write_toy_corpus(const ToyCorpus& corpus, const std::string& dir, const std::string& source_lang,
                      const std::string& target_lang, bool alignments) {
  create_output_directory(dir);
  for (const auto& split : corpus.splits) {
    write_lines(dir + "/" + split.name + "." + source_lang, split.source);
    write_lines(dir + "/" + split.name + "." + target_lang, split.target);
    if (alignments) write_lines(dir + "/" + split.name + ".align", split.alignment);
  }
}

std::string describe_toy_corpus(const ToyCorpus& corpus, const ToyCorpusOptions& options) {
  std::string sizes;
  for (const auto& split : corpus.splits)
    sizes += (sizes.empty() ? "" : ", ") + split.name + " " + std::to_string(split.source.size());
  const ToySplit& train = corpus.splits.at(0);
  char figures[256];
  std::snprintf(figures, sizeof figures,
                "%zu/%zu word types, %.1f/%.1f tokens per sentence (source/target), "
                "%zu valid and %zu test sentences also in train",
                corpus.source_types, corpus.target_types, corpus.source_mean_length, corpus.target_mean_length,
                overlap(train, corpus.splits.at(1)), overlap(train, corpus.splits.at(2)));
  return sizes + " sentence pairs (seed " + std::to_string(options.seed) + "); " + figures;
}

}  // namespace csan::text
