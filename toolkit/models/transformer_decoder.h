// The Transformer decoder: the shared frame (decoder_frame.h: embeddings in, final norm and
// output layer out) around N decoder layers over the encoder's one memory.
#pragma once

#include <torch/torch.h>

#include "toolkit/models/decoder_frame.h"
#include "toolkit/models/encoder_decoder_model.h"
#include "toolkit/models/token_embedding.h"
#include "toolkit/models/transformer_options.h"
#include "toolkit/nn/decoder_layer.h"
#include "toolkit/nn/incremental_state.h"
#include "toolkit/nn/positional_embedding.h"

namespace csan::models {

class TransformerDecoderImpl : public DecoderFrameImpl {
 public:
  // embed_tokens is registered here unless `embedding_owned_elsewhere` (shared with
  // the encoder), so that parameters() lists every tensor once.
  TransformerDecoderImpl(const TransformerOptions& options, TokenEmbedding embed_tokens, bool embedding_owned_elsewhere,
                         int64_t padding_idx);
  // Logits [B, T', V]: T' = T, or with a state only the positions not yet cached.
  // With `positions` (int64 [N] into the flattened [B * T']): logits [N, V] of those only.
  torch::Tensor forward(const torch::Tensor& prev_output_tokens, const EncoderOut& encoder_out,
                        nn::IncrementalState* state, const torch::Tensor& positions = {});
};
TORCH_MODULE(TransformerDecoder);

}  // namespace csan::models
