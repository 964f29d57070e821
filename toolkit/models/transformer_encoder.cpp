#include "toolkit/models/transformer_encoder.h"

#include <cmath>

namespace csan::models {

TransformerEncoderImpl::TransformerEncoderImpl(const TransformerOptions& options, TokenEmbedding embed,
                                               int64_t padding_idx)
    : options_(options), padding_idx_(padding_idx) {
  const int64_t d = options.layer.embed_dim;
  embed_scale_ = options.no_scale_embedding ? 1.0 : std::sqrt(static_cast<double>(d));
  embed_tokens = register_module("embed_tokens", std::move(embed));
  embed_positions = register_module(
      "embed_positions",
      nn::PositionalEmbedding(nn::PositionalEmbeddingOptions{
          options.max_source_positions, d, padding_idx, options.learned_pos, options.sinusoidal_layout == "marian"}));
  if (options.layernorm_embedding) layernorm_embedding = register_module("layernorm_embedding", nn::layer_norm(d));
  for (int64_t i = 0; i < options.encoder_layers; ++i) layers->push_back(nn::EncoderLayer(options.layer));
  register_module("layers", layers);
  if (options.layer.normalize_before) layer_norm = register_module("layer_norm", nn::layer_norm(d));
}

EncoderOut TransformerEncoderImpl::forward(const torch::Tensor& src_tokens) {
  torch::Tensor padding_mask = src_tokens.eq(padding_idx_);
  torch::Tensor x = embed_tokens(src_tokens);
  if (embed_scale_ != 1.0) x = x * embed_scale_;
  x = x + embed_positions(src_tokens).to(x.scalar_type());
  if (layernorm_embedding) x = layernorm_embedding(x);
  x = nn::dropout_if(x, options_.layer.dropout, is_training());
  // Without padding in the batch the mask would only cost a masked_fill per layer.
  torch::Tensor attention_mask = padding_mask.any().item<bool>() ? padding_mask : torch::Tensor();
  for (const auto& layer : *layers) x = layer->as<nn::EncoderLayer>()->forward(x, attention_mask);
  if (layer_norm) x = layer_norm(x);
  return {x, padding_mask};
}

}  // namespace csan::models
