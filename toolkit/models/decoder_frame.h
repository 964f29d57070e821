// What every decoder of the registry shares around its layers (fairseq's
// TransformerDecoder frame): token embeddings scaled by sqrt(d) plus positions and dropout
// on the way in; a final layer norm (pre-norm only) and the output layer (tied to the
// embedding when shared; shortlisted by the search's OutputVocabulary) on the way out. The
// Transformer's (also CSAN's and the locality baselines') and CCN's decoders differ only in
// their layers, so they derive from this instead of each writing the frame again (one copy
// had lacked the shortlist).
#pragma once

#include <torch/torch.h>

#include "toolkit/models/token_embedding.h"
#include "toolkit/models/transformer_options.h"
#include "toolkit/nn/incremental_state.h"
#include "toolkit/nn/positional_embedding.h"

namespace csan::models {

class DecoderFrameImpl : public nn::ProjectingModule {
 public:
  // The output projection when it is its own (a tied one is embed_tokens').
  std::vector<Site> projection_sites() override;

  TokenEmbedding embed_tokens{nullptr};
  nn::PositionalEmbedding embed_positions{nullptr};
  torch::nn::ModuleList layers;
  torch::nn::LayerNorm layer_norm{nullptr};           // pre-norm only
  torch::nn::LayerNorm layernorm_embedding{nullptr};  // model.layernorm_embedding only
  torch::Tensor output_projection;                    // [V, D]; undefined when tied to embed_tokens or converted
  torch::Tensor final_logits_bias;                    // [V], added to the logits; model.final_logits_bias only

 protected:
  // Registers embed_tokens (unless `embedding_owned_elsewhere`: shared with the encoder, so
  // that parameters() lists every tensor once) and embed_positions. The derived decoder then
  // fills `layers` and calls register_layers_and_output(), which keeps the parameters in the
  // order checkpoints and optimizers have always seen: embeddings, layers, norm, projection.
  DecoderFrameImpl(const TransformerOptions& options, TokenEmbedding embed, bool embedding_owned_elsewhere,
                   int64_t padding_idx);
  void register_layers_and_output();

  // The target tokens not yet cached (positions [cached, T)) embedded: [B, T - cached, D].
  torch::Tensor embed(const torch::Tensor& prev_output_tokens, int64_t cached);
  // Logits [B, T', V] of the layers' output, or [N, V] at `positions` (int64 [N] into the
  // flattened [B * T']) when given; [.., S] over the shortlist `state` carries, if any.
  torch::Tensor output(torch::Tensor x, const torch::Tensor& positions, const nn::IncrementalState* state);

  const TransformerOptions& options() const { return options_; }

 private:
  TransformerOptions options_;
  double embed_scale_;
  bool tied_;
  nn::Projection output_layer_;  // of output_projection
};

}  // namespace csan::models
