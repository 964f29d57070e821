// Token embedding (scaled by sqrt(D) unless disabled) + positions, dropout, N encoder
// layers, and a final layer norm in pre-norm mode.
#pragma once

#include <torch/torch.h>

#include "toolkit/models/encoder_decoder_model.h"
#include "toolkit/models/token_embedding.h"
#include "toolkit/models/transformer_options.h"
#include "toolkit/nn/encoder_layer.h"
#include "toolkit/nn/positional_embedding.h"

namespace csan::models {

class TransformerEncoderImpl : public torch::nn::Module {
 public:
  // embed_tokens is registered here (the encoder owns a shared embedding).
  TransformerEncoderImpl(const TransformerOptions& options, TokenEmbedding embed_tokens, int64_t padding_idx);
  EncoderOut forward(const torch::Tensor& src_tokens);

  TokenEmbedding embed_tokens{nullptr};
  nn::PositionalEmbedding embed_positions{nullptr};
  torch::nn::ModuleList layers;
  torch::nn::LayerNorm layer_norm{nullptr};  // pre-norm only
  torch::nn::LayerNorm layernorm_embedding{nullptr};  // model.layernorm_embedding only

 private:
  TransformerOptions options_;
  int64_t padding_idx_;
  double embed_scale_;
};
TORCH_MODULE(TransformerEncoder);

}  // namespace csan::models
