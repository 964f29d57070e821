// Token embeddings as fairseq's Embedding(): N(0, D^-1/2) weights, a zero padding row
// that receives no gradient.
#pragma once

#include <cstdint>

#include <torch/torch.h>

#include "toolkit/nn/converted_weights.h"

namespace csan::models {

class TokenEmbeddingImpl : public torch::nn::Module {
 public:
  TokenEmbeddingImpl(int64_t vocab_size, int64_t dim, int64_t padding_idx);
  // A table converted for inference with its tied output projection (nn/converted_weights.h)
  // still gives float rows.
  torch::Tensor forward(const torch::Tensor& tokens) {
    return nn::is_converted(weight) ? nn::converted_embedding(weight, tokens)
                                    : torch::embedding(weight, tokens, padding_idx_);
  }

  torch::Tensor weight;  // [V, D]

 private:
  int64_t padding_idx_;
};
TORCH_MODULE(TokenEmbedding);

}  // namespace csan::models
