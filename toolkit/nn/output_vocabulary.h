// A lexical shortlist's restriction of the output layer (csan-generate --shortlist): a
// decoder's output layer (output_logits, which every decoder ends with) projects onto rows
// `ids` of its output projection only and returns logits [.., S] in that order. The search
// passes it to the decoder in the model's IncrementalState (generation/ensemble_decoder.cpp),
// so parallel batches, each with its own states, each have their own; the rows are selected
// at the first step of a batch and kept.
#pragma once

#include <torch/torch.h>

#include "toolkit/nn/projection.h"

namespace csan::nn {

class OutputVocabulary {
 public:
  explicit OutputVocabulary(torch::Tensor ids) : ids_(std::move(ids)) {}
  const torch::Tensor& ids() const { return ids_; }  // [S] int64, sorted

  // x · W[ids]ᵀ [.., S] for the output projection W (its parameter `weight` and `projection`).
  torch::Tensor logits(const torch::Tensor& x, const torch::Tensor& weight, const Projection& projection);

 private:
  torch::Tensor ids_;
  // Rows `ids` of W in its precision (made on first use): the parameter's rows, or a
  // kernel of them for a converted projection.
  torch::Tensor rows_;
  Projection selected_;
};

// The output layer: logits x · Wᵀ [.., V], or [.., S] over `vocabulary`'s rows when given.
torch::Tensor output_logits(const torch::Tensor& x, const torch::Tensor& weight, const Projection& projection,
                            OutputVocabulary* vocabulary);

}  // namespace csan::nn
