// A lexical shortlist's restriction of the output layer (csan-generate --shortlist):
// while an OutputVocabularyScope is alive on a thread, a decoder's output layer
// (output_logits, which every decoder ends with) projects onto rows `ids` of its output
// projection only and returns logits [.., S] in that order. The search sets it per model around each step
// (generation/ensemble_decoder.cpp), so parallel batches, each on its own thread, each
// have their own; the selected rows are made at the first step of a batch and kept.
#pragma once

#include <torch/torch.h>

namespace csan::nn {

struct OutputVocabulary {
  torch::Tensor ids;     // [S] int64, sorted
  torch::Tensor weight;  // rows `ids` of the projection, in its precision (made on first use)

  // The rows of `projection` [V, D] for ids.
  const torch::Tensor& rows_of(const torch::Tensor& projection);
};

class OutputVocabularyScope {
 public:
  // nullptr: the whole vocabulary.
  explicit OutputVocabularyScope(OutputVocabulary* vocabulary);
  ~OutputVocabularyScope();
  OutputVocabularyScope(const OutputVocabularyScope&) = delete;
  OutputVocabularyScope& operator=(const OutputVocabularyScope&) = delete;

  // The restriction in force on this thread, or nullptr.
  static OutputVocabulary* current();

 private:
  OutputVocabulary* previous_;
};

// The output layer: logits x · projectionᵀ [.., V], or [.., S] over the shortlisted rows
// while an OutputVocabularyScope is in force on this thread.
torch::Tensor output_logits(const torch::Tensor& x, const torch::Tensor& projection);

}  // namespace csan::nn
