#include "toolkit/models/transformer_decoder.h"

#include <cmath>
#include <string>

#include "toolkit/nn/init.h"
#include "toolkit/nn/output_vocabulary.h"

namespace csan::models {

namespace {
std::string layer_key(int64_t i) { return "decoder.layers." + std::to_string(i); }
// The one memory of a Transformer encoder.
const char* const kMemory = "encoder";
}  // namespace

TransformerDecoderImpl::TransformerDecoderImpl(const TransformerOptions& options, TokenEmbedding embed,
                                               bool embedding_owned_elsewhere, int64_t padding_idx)
    : options_(options), padding_idx_(padding_idx) {
  const int64_t d = options.layer.embed_dim;
  embed_scale_ = options.no_scale_embedding ? 1.0 : std::sqrt(static_cast<double>(d));
  embed_tokens = embedding_owned_elsewhere ? std::move(embed) : register_module("embed_tokens", std::move(embed));
  embed_positions =
      register_module("embed_positions", nn::PositionalEmbedding(nn::PositionalEmbeddingOptions{
                                             options.max_target_positions, d, padding_idx, options.learned_pos}));
  for (int64_t i = 0; i < options.decoder_layers; ++i)
    layers->push_back(nn::DecoderLayer(options.layer, layer_key(i), kMemory));
  register_module("layers", layers);
  if (options.layer.normalize_before) layer_norm = register_module("layer_norm", nn::layer_norm(d));

  // A tied projection reads embed_tokens->weight at each call, so it follows whatever
  // replaces or moves that parameter (checkpoint loading, .to(device)).
  tied_ = options.share_decoder_input_output_embed || options.share_all_embeddings;
  if (!tied_) {
    output_projection = register_parameter("output_projection", torch::empty_like(embed_tokens->weight));
    nn::init_normal(output_projection, std::pow(static_cast<double>(d), -0.5));
  }
}

torch::Tensor TransformerDecoderImpl::forward(const torch::Tensor& prev_output_tokens, const EncoderOut& encoder_out,
                                              nn::IncrementalState* state, const torch::Tensor& positions) {
  // With a state, positions [0, cached) are in the self-attention caches already.
  int64_t cached = 0;
  const std::string first_cache = layer_key(0) + ".self_attn.prev_key";
  if (state) cached = state->length(first_cache);
  torch::Tensor tokens =
      cached > 0 ? prev_output_tokens.narrow(1, cached, prev_output_tokens.size(1) - cached) : prev_output_tokens;

  torch::Tensor x = embed_tokens(tokens);
  if (embed_scale_ != 1.0) x = x * embed_scale_;
  x = nn::dropout_if(x + embed_positions(tokens, cached).to(x.scalar_type()), options_.layer.dropout, is_training());
  const Memory& memory = encoder_out.at(kMemory);
  const torch::Tensor& mask = memory.padding_mask;
  torch::Tensor attention_mask = mask.defined() && mask.any().item<bool>() ? mask : torch::Tensor();
  for (const auto& layer : *layers)
    x = layer->as<nn::DecoderLayer>()->forward(x, memory.out, attention_mask, state, cached);
  if (layer_norm) x = layer_norm(x);
  if (positions.defined()) x = x.reshape({-1, x.size(-1)}).index_select(0, positions);
  return nn::output_logits(x, tied_ ? embed_tokens->weight : output_projection);
}

}  // namespace csan::models
