// Embedding + positions, dropout, N decoder layers, a final layer norm in pre-norm
// mode, and the output projection (tied to the embedding when shared).
#pragma once

#include <torch/torch.h>

#include "toolkit/models/encoder_decoder_model.h"
#include "toolkit/models/token_embedding.h"
#include "toolkit/models/transformer_options.h"
#include "toolkit/nn/decoder_layer.h"
#include "toolkit/nn/incremental_state.h"
#include "toolkit/nn/positional_embedding.h"

namespace csan::models {

class TransformerDecoderImpl : public torch::nn::Module {
 public:
  // embed_tokens is registered here unless `embedding_owned_elsewhere` (shared with
  // the encoder), so that parameters() lists every tensor once.
  TransformerDecoderImpl(const TransformerOptions& options, TokenEmbedding embed_tokens,
                         bool embedding_owned_elsewhere, int64_t padding_idx);
  // Logits [B, T', V]: T' = T, or with a state only the positions not yet cached.
  // With `positions` (int64 [N] into the flattened [B * T']): logits [N, V] of those only.
  torch::Tensor forward(const torch::Tensor& prev_output_tokens, const EncoderOut& encoder_out,
                        nn::IncrementalState* state, const torch::Tensor& positions = {});

  TokenEmbedding embed_tokens{nullptr};
  nn::PositionalEmbedding embed_positions{nullptr};
  torch::nn::ModuleList layers;
  torch::nn::LayerNorm layer_norm{nullptr};  // pre-norm only
  torch::Tensor output_projection;           // [V, D]; undefined when tied to embed_tokens

 private:
  TransformerOptions options_;
  int64_t padding_idx_;
  double embed_scale_;
  bool tied_;
};
TORCH_MODULE(TransformerDecoder);

}  // namespace csan::models
