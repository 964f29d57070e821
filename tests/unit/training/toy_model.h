// A very small EncoderDecoderModel for trainer tests that must not depend on the
// Transformer: embeddings, mean-pooled source, dropout (so RNG state matters) and an
// output projection.
#pragma once

#include <torch/torch.h>

#include "toolkit/models/encoder_decoder_model.h"

namespace csan::training::testing {

class ToyModel : public models::EncoderDecoderModel {
 public:
  ToyModel(int64_t vocab, int64_t dim, double dropout) : dropout_(dropout) {
    embed_ = register_module("embed", torch::nn::Embedding(vocab, dim));
    hidden_ = register_module("hidden", torch::nn::Linear(2 * dim, dim));
    out_ = register_module("out", torch::nn::Linear(dim, vocab));
    scale_ = register_parameter("scale", torch::ones({1}));
  }
  models::EncoderOut encode(const torch::Tensor& src_tokens, const torch::Tensor&) override {
    auto e = embed_(src_tokens);
    return {e, src_tokens.eq(1)};
  }
  torch::Tensor decode(const torch::Tensor& prev, const models::EncoderOut& enc, nn::IncrementalState*) override {
    auto keep = enc.padding_mask.logical_not().unsqueeze(-1).to(torch::kFloat);
    auto pooled = (enc.out * keep).sum(1) / keep.sum(1);
    auto x = embed_(prev);
    x = torch::cat({x, pooled.unsqueeze(1).expand_as(x)}, -1);
    x = torch::relu(hidden_(x));
    x = torch::dropout(x, dropout_, is_training());
    return out_(x) * scale_;
  }
  int64_t max_source_positions() const override { return 1024; }
  int64_t max_target_positions() const override { return 1024; }

  torch::Tensor scale_;

 private:
  double dropout_;
  torch::nn::Embedding embed_{nullptr};
  torch::nn::Linear hidden_{nullptr}, out_{nullptr};
};

}  // namespace csan::training::testing
