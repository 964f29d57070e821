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
#include "toolkit/loading/model_loader.h"
#include "toolkit/models/tagging_model.h"
#include "toolkit/tasks/recipe.h"
#include "toolkit/tasks/tagging_batch.h"
#include "toolkit/tasks/tagging_task.h"

namespace fs = std::filesystem;

namespace csan::tasks {

namespace {

data::ConllCorpus read_input(const std::string& input) {
  if (input != "-") return data::read_conllu(input);
  std::ostringstream text;
  text << std::cin.rdbuf();
  return data::parse_conllu(text.str(), "<stdin>");
}

struct Taggers {
  std::vector<std::shared_ptr<models::TaggingModel>> models;
  TaggingCheckpointData data;
};

Taggers load_taggers(const GenerateOptions& options, checkpoint::CheckpointReader& first) {
  Taggers taggers;
  checkpoint::CheckpointMeta first_meta;
  for (size_t i = 0; i < options.paths.size(); ++i) {
    loading::LoadedModel loaded =
        i == 0 ? loading::load_model(first, describe_model)
               : loading::load_ensemble_member(options.paths[i], first_meta, options.paths[0], describe_model);
    if (i == 0) {
      first_meta = loaded.meta;
      taggers.data = tagging_data_from_meta(loaded.meta, loaded.path);
    } else if (tagging_meta_data(tagging_data_from_meta(loaded.meta, loaded.path)) != tagging_meta_data(taggers.data)) {
      throw Error(loaded.path + ": its vocabularies or layout differ from those of " + options.paths[0] +
                  " (an ensemble needs one label set)");
    }
    auto model = std::dynamic_pointer_cast<models::TaggingModel>(loaded.model);
    if (!model) throw Error(loaded.path + ": its model is not a tagging model");
    taggers.models.push_back(std::move(model));
  }
  return taggers;
}

// One chunk of the input and where its words go.
struct ChunkPlace {
  size_t sentence = 0, first_word = 0;
};

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
  const Taggers taggers = load_taggers(options, first);
  const auto& v = taggers.data.vocabularies;
  const auto& layout = taggers.data.info.layout;
  const data::TagColumn column = taggers.data.info.column;
  const data::ConllCorpus corpus = read_input(options.input);
  const auto start = std::chrono::steady_clock::now();

  std::vector<TaggingChunk> chunks;
  std::vector<ChunkPlace> places;
  for (size_t s = 0; s < corpus.sentences.size(); ++s) {
    data::TaggedSentence sentence;
    for (const auto& word : corpus.sentences[s].words) sentence.forms.push_back(word.form);
    size_t first_word = 0;
    for (const auto& chunk : data::encode_sentence(sentence, v, layout)) {
      chunks.push_back({{chunk.words.begin(), chunk.words.end()}, {chunk.chars.begin(), chunk.chars.end()}, {}});
      places.push_back({s, first_word});
      first_word += chunk.words.size();
    }
  }

  std::vector<std::vector<std::string>> tags(corpus.sentences.size());
  for (size_t s = 0; s < corpus.sentences.size(); ++s) tags[s].resize(corpus.sentences[s].words.size());
  const auto pad_chars = data::pad_word_char_ids(layout, v.chars);
  const size_t step = options.batch_size > 0 ? static_cast<size_t>(options.batch_size) : chunks.size();
  torch::NoGradGuard no_grad;
  for (size_t begin = 0; begin < chunks.size(); begin += step) {
    const size_t end = std::min(chunks.size(), begin + step);
    const std::vector<TaggingChunk> batch(chunks.begin() + static_cast<std::ptrdiff_t>(begin),
                                          chunks.begin() + static_cast<std::ptrdiff_t>(end));
    const auto t = collate_tagging(batch, layout, pad_chars);
    torch::Tensor probabilities;
    for (const auto& model : taggers.models) {
      auto p = torch::softmax(model->tag(t.fields), -1);
      probabilities = probabilities.defined() ? probabilities + p : p;
    }
    const auto predicted = predict_labels(probabilities).contiguous();
    const auto* ids = predicted.data_ptr<int64_t>();
    for (size_t c = begin; c < end; ++c)
      for (size_t w = 0; w < batch[c - begin].words.size(); ++w)
        tags[places[c].sentence][places[c].first_word + w] =
            v.labels.symbol(static_cast<int>(ids[(c - begin) * static_cast<size_t>(layout.chunk_length) + w]));
  }

  std::string text;
  int64_t words = 0, correct = 0, gold = 0;
  for (size_t s = 0; s < corpus.sentences.size(); ++s) {
    const auto& sentence = corpus.sentences[s];
    text += data::render_with_tags(sentence, column, tags[s]);
    for (size_t w = 0; w < sentence.words.size(); ++w) {
      const std::string& given = sentence.words[w].tag(column);
      ++words;
      if (given == "_") continue;
      ++gold;
      correct += given == tags[s][w];
    }
  }
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
