// A word's representation from its characters (Yu et al. 2017, as the convoluted-
// attention tagger uses it): character embeddings, a stack of 1-D convolutions over the
// character slots ('same' zero padding, ReLU), then the maximum over the slots. Padding
// slots are real inputs (the <PAD> character has an embedding), as in the authors' Keras
// code. Initialized as Keras: U(-0.05, 0.05) embeddings, glorot_uniform kernels, zero bias.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <vector>

namespace csan::nn {

struct CharCnnOptions {
  int64_t vocab_size = 0;
  int64_t embed_dim = 64;
  int64_t filters = 64;
  int64_t width = 5;  // odd
  int64_t layers = 3;
};

class CharCnnImpl : public torch::nn::Module {
 public:
  explicit CharCnnImpl(const CharCnnOptions& options);
  // chars [..., C] int64 -> [..., filters]. Each distinct spelling in the batch runs the
  // convolutions once (the padding word of every chunk, repeated words), which gives the
  // same values and gradients as running every word.
  torch::Tensor forward(const torch::Tensor& chars);
  // The same without the de-duplication (the reference the tests compare with).
  torch::Tensor forward_every_word(const torch::Tensor& chars);

  torch::Tensor embedding;                     // [V, embed_dim]
  std::vector<torch::Tensor> weights, biases;  // [filters, in, width], [filters]

 private:
  torch::Tensor encode(const torch::Tensor& rows);  // [N, C] -> [N, filters]
};
TORCH_MODULE(CharCnn);

}  // namespace csan::nn
