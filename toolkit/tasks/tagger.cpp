#include "toolkit/tasks/tagger.h"

#include "toolkit/core/error.h"
#include "toolkit/loading/model_loader.h"
#include "toolkit/nn/compute_device.h"
#include "toolkit/nn/compute_threads.h"
#include "toolkit/tasks/recipe.h"
#include "toolkit/tasks/tagging_batch.h"

namespace csan::tasks {

namespace {

// One chunk of the input and where its words go.
struct ChunkPlace {
  size_t sentence = 0, first_word = 0;
};

}  // namespace

Tagger::Tagger(const TaggerOptions& options, checkpoint::CheckpointReader* first) {
  if (options.paths.empty()) throw Error("path: no checkpoint given", ErrorKind::bad_option);
  device_ = nn::named_device(options.device);
  if (options.threads < 0)
    throw Error("threads: must not be negative (0: leave LibTorch's count as it is)", ErrorKind::bad_option);
  if (options.threads > 0) nn::use_compute_threads(options.threads, "threads");
  std::unique_ptr<checkpoint::CheckpointReader> opened;
  if (!first) {
    opened = std::make_unique<checkpoint::CheckpointReader>(options.paths[0]);
    first = opened.get();
  }
  checkpoint::CheckpointMeta first_meta;
  for (size_t i = 0; i < options.paths.size(); ++i) {
    loading::LoadedModel loaded =
        i == 0 ? loading::load_model(*first, describe_model)
               : loading::load_ensemble_member(options.paths[i], first_meta, options.paths[0], describe_model);
    if (i == 0) {
      first_meta = loaded.meta;
      data_ = tagging_data_from_meta(loaded.meta, loaded.path);
    } else if (tagging_meta_data(tagging_data_from_meta(loaded.meta, loaded.path)) != tagging_meta_data(data_)) {
      throw Error(loaded.path + ": its vocabularies or layout differ from those of " + options.paths[0] +
                  " (an ensemble needs one label set)");
    }
    auto model = std::dynamic_pointer_cast<models::TaggingModel>(loaded.model);
    if (!model) throw Error(loaded.path + ": its model is not a tagging model", ErrorKind::bad_option);
    model->to(device_);
    models_.push_back(std::move(model));
  }
}

std::vector<std::vector<std::string>> Tagger::tag(const std::vector<std::vector<std::string>>& sentences,
                                                  int64_t batch_size) {
  if (batch_size < 0) throw Error("batch_size: must not be negative", ErrorKind::bad_option);
  const auto& v = data_.vocabularies;
  const auto& layout = data_.info.layout;
  std::vector<TaggingChunk> chunks;
  std::vector<ChunkPlace> places;
  for (size_t s = 0; s < sentences.size(); ++s) {
    data::TaggedSentence sentence;
    sentence.forms = sentences[s];
    size_t first_word = 0;
    for (const auto& chunk : data::encode_sentence(sentence, v, layout)) {
      chunks.push_back({{chunk.words.begin(), chunk.words.end()}, {chunk.chars.begin(), chunk.chars.end()}, {}});
      places.push_back({s, first_word});
      first_word += chunk.words.size();
    }
  }

  std::vector<std::vector<std::string>> tags(sentences.size());
  for (size_t s = 0; s < sentences.size(); ++s) tags[s].resize(sentences[s].size());
  const auto pad_chars = data::pad_word_char_ids(layout, v.chars);
  const size_t step = batch_size > 0 ? static_cast<size_t>(batch_size) : chunks.size();
  std::lock_guard<std::mutex> lock(mutex_);
  torch::NoGradGuard no_grad;
  for (size_t begin = 0; begin < chunks.size(); begin += step) {
    const size_t end = std::min(chunks.size(), begin + step);
    const std::vector<TaggingChunk> batch(chunks.begin() + static_cast<std::ptrdiff_t>(begin),
                                          chunks.begin() + static_cast<std::ptrdiff_t>(end));
    const auto t = collate_tagging(batch, layout, pad_chars).to(device_);
    torch::Tensor probabilities;
    for (const auto& model : models_) {
      auto p = torch::softmax(model->tag(t.fields), -1);
      probabilities = probabilities.defined() ? probabilities + p : p;
    }
    const auto predicted = predict_labels(probabilities).to(torch::kCPU).contiguous();
    const auto* ids = predicted.data_ptr<int64_t>();
    for (size_t c = begin; c < end; ++c)
      for (size_t w = 0; w < batch[c - begin].words.size(); ++w)
        tags[places[c].sentence][places[c].first_word + w] =
            v.labels.symbol(static_cast<int>(ids[(c - begin) * static_cast<size_t>(layout.chunk_length) + w]));
  }
  return tags;
}

TaggedConllu Tagger::tag_conllu(const data::ConllCorpus& corpus, int64_t batch_size) {
  std::vector<std::vector<std::string>> sentences(corpus.sentences.size());
  for (size_t s = 0; s < corpus.sentences.size(); ++s)
    for (const auto& word : corpus.sentences[s].words) sentences[s].push_back(word.form);
  const auto tags = tag(sentences, batch_size);
  const data::TagColumn column = data_.info.column;
  TaggedConllu result;
  for (size_t s = 0; s < corpus.sentences.size(); ++s) {
    const auto& sentence = corpus.sentences[s];
    result.text += data::render_with_tags(sentence, column, tags[s]);
    for (size_t w = 0; w < sentence.words.size(); ++w) {
      const std::string& given = sentence.words[w].tag(column);
      ++result.words;
      if (given == "_") continue;
      ++result.gold;
      result.correct += given == tags[s][w];
    }
  }
  return result;
}

}  // namespace csan::tasks
