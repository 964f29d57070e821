#include "toolkit/tasks/tagging_batch.h"

#include "toolkit/core/error.h"
#include "toolkit/data/tagging_vocabulary.h"

namespace csan::tasks {

namespace {
constexpr int64_t kFirstTag = 2;  // after <PAD> and <OOV>
}  // namespace

training::TensorBatch collate_tagging(const std::vector<TaggingChunk>& chunks, const data::TaggingLayout& layout,
                                      const std::vector<int32_t>& pad_word_chars) {
  training::TensorBatch t;
  const auto b = static_cast<int64_t>(chunks.size());
  t.nsentences = b;
  if (b == 0) return t;
  const int64_t length = layout.chunk_length, width = layout.word_chars;
  auto words = torch::full({b, length}, data::TaggingVocabulary::kPad, torch::kLong);
  auto labels = torch::full({b, length}, data::TaggingVocabulary::kPad, torch::kLong);
  auto pad_chars = torch::tensor(std::vector<int64_t>(pad_word_chars.begin(), pad_word_chars.end()), torch::kLong);
  auto chars = pad_chars.view({1, 1, width}).repeat({b, length, 1});
  auto* w = words.data_ptr<int64_t>();
  auto* l = labels.data_ptr<int64_t>();
  auto* c = chars.data_ptr<int64_t>();
  for (int64_t r = 0; r < b; ++r) {
    const auto& chunk = chunks[static_cast<size_t>(r)];
    const auto n = static_cast<int64_t>(chunk.words.size());
    if (n > length || static_cast<int64_t>(chunk.chars.size()) != n * width)
      throw Error("collate_tagging: a chunk of " + std::to_string(n) + " words does not fit the layout");
    std::copy(chunk.words.begin(), chunk.words.end(), w + r * length);
    std::copy(chunk.chars.begin(), chunk.chars.end(), c + r * length * width);
    if (!chunk.labels.empty()) std::copy(chunk.labels.begin(), chunk.labels.end(), l + r * length);
    t.ntokens += n;
  }
  t.fields = {{"words", words}, {"chars", chars}, {"labels", labels}};
  return t;
}

models::ModelContext tagging_context(int64_t words, int64_t chars, int64_t labels, const data::TaggingLayout& layout) {
  return {{{"words", words}, {"chars", chars}, {"labels", labels}, {"positions", layout.chunk_length}},
          data::TaggingVocabulary::kPad,
          false};
}

torch::Tensor predict_labels(const torch::Tensor& logits) {
  return logits.narrow(-1, kFirstTag, logits.size(-1) - kFirstTag).argmax(-1) + kFirstTag;
}

}  // namespace csan::tasks
