// What the tagging task's training, validation and csan-generate share: chunks of ids
// collated into the task's named tensors, the model context of its vocabularies, and
// the labels predicted from logits. Batch fields:
//   "words"  [B, t]     word ids, padded with the padding word (<PAD>, id 0)
//   "chars"  [B, t, C]  character ids; a padding slot holds the padding word's spelling
//   "labels" [B, t]     label ids, <PAD> (0) at padding slots (ignored by loss and metrics)
// Every chunk is padded to the data's chunk length t (the authors' protocol: the model
// always sees t positions, so its output never depends on the rest of the batch).
#pragma once

#include <cstdint>
#include <vector>

#include "toolkit/data/tagging_data.h"
#include "toolkit/models/model_context.h"
#include "toolkit/training/tensor_batch.h"

namespace csan::tasks {

struct TaggingChunk {
  std::vector<int64_t> words;   // n
  std::vector<int64_t> chars;   // n x C
  std::vector<int64_t> labels;  // n, or empty (unlabelled text)
};

// ntokens is the number of real words.
training::TensorBatch collate_tagging(const std::vector<TaggingChunk>& chunks, const data::TaggingLayout& layout,
                                      const std::vector<int32_t>& pad_word_chars);

// Vocabularies "words", "chars", "labels", "positions" (= chunk length t); pad index 0.
models::ModelContext tagging_context(int64_t words, int64_t chars, int64_t labels, const data::TaggingLayout& layout);

// The best real label per position (never <PAD> or <OOV>, which are not tags): [B, T].
torch::Tensor predict_labels(const torch::Tensor& logits);

}  // namespace csan::tasks
