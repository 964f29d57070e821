// Token embeddings as fairseq's Embedding(): N(0, D^-1/2) weights, a zero padding row
// that receives no gradient. A table that is also the decoder's output projection (tied)
// is a projection (nn/projection.h): converted for inference, its lookups read the
// kernel's rows back as float.
#pragma once

#include <torch/torch.h>

#include <cstdint>

#include "toolkit/nn/projection.h"

namespace csan::models {

class TokenEmbeddingImpl : public nn::ProjectingModule {
 public:
  TokenEmbeddingImpl(int64_t vocab_size, int64_t dim, int64_t padding_idx);
  torch::Tensor forward(const torch::Tensor& tokens) {
    return projection.kernel() ? projection.kernel()->embedding(tokens)
                               : torch::embedding(weight, tokens, padding_idx_);
  }
  // The decoder's output layer multiplies by this table (shared input and output embeddings).
  void tie_to_output() { tied_to_output_ = true; }
  std::vector<Site> projection_sites() override {
    if (!tied_to_output_) return {};  // only looked up: stays fp32
    return {{"weight", &weight, &projection}};
  }

  torch::Tensor weight;  // [V, D]; undefined once converted
  nn::Projection projection;

 private:
  int64_t padding_idx_;
  bool tied_to_output_ = false;
};
TORCH_MODULE(TokenEmbedding);

}  // namespace csan::models
