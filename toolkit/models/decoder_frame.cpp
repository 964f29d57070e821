#include "toolkit/models/decoder_frame.h"

#include <cmath>

#include "toolkit/nn/init.h"
#include "toolkit/nn/transformer_layer_options.h"

namespace csan::models {

DecoderFrameImpl::DecoderFrameImpl(const TransformerOptions& options, TokenEmbedding embed,
                                   bool embedding_owned_elsewhere, int64_t padding_idx)
    : options_(options) {
  const int64_t d = options.layer.embed_dim;
  embed_scale_ = options.no_scale_embedding ? 1.0 : std::sqrt(static_cast<double>(d));
  embed_tokens = embedding_owned_elsewhere ? std::move(embed) : register_module("embed_tokens", std::move(embed));
  embed_positions = register_module(
      "embed_positions",
      nn::PositionalEmbedding(nn::PositionalEmbeddingOptions{
          options.max_target_positions, d, padding_idx, options.learned_pos, options.sinusoidal_layout == "marian"}));
  if (options.layernorm_embedding) layernorm_embedding = register_module("layernorm_embedding", nn::layer_norm(d));
}

void DecoderFrameImpl::register_layers_and_output() {
  const int64_t d = options_.layer.embed_dim;
  register_module("layers", layers);
  if (options_.layer.normalize_before) layer_norm = register_module("layer_norm", nn::layer_norm(d));
  // A tied projection reads embed_tokens->weight at each call, so it follows whatever
  // replaces or moves that parameter (checkpoint loading, .to(device)).
  tied_ = options_.share_decoder_input_output_embed || options_.share_all_embeddings;
  if (tied_) embed_tokens->tie_to_output();
  if (!tied_) {
    output_projection = register_parameter("output_projection", torch::empty_like(embed_tokens->weight));
    nn::init_normal(output_projection, std::pow(static_cast<double>(d), -0.5));
  }
  if (options_.final_logits_bias)
    final_logits_bias = register_parameter("final_logits_bias", torch::zeros({embed_tokens->weight.size(0)}));
}

torch::Tensor DecoderFrameImpl::embed(const torch::Tensor& prev_output_tokens, int64_t cached) {
  const torch::Tensor tokens =
      cached > 0 ? prev_output_tokens.narrow(1, cached, prev_output_tokens.size(1) - cached) : prev_output_tokens;
  torch::Tensor x = embed_tokens(tokens);
  if (embed_scale_ != 1.0) x = x * embed_scale_;
  x = x + embed_positions(tokens, cached).to(x.scalar_type());
  if (layernorm_embedding) x = layernorm_embedding(x);
  return nn::dropout_if(x, options_.layer.dropout, is_training());
}

std::vector<nn::ProjectingModule::Site> DecoderFrameImpl::projection_sites() {
  if (tied_) return {};
  return {{"output_projection", &output_projection, &output_layer_}};
}

torch::Tensor DecoderFrameImpl::output(torch::Tensor x, const torch::Tensor& positions,
                                       const nn::IncrementalState* state) {
  if (layer_norm) x = layer_norm(x);
  if (positions.defined()) x = x.reshape({-1, x.size(-1)}).index_select(0, positions);
  nn::OutputVocabulary* vocabulary = state ? state->output_vocabulary() : nullptr;
  torch::Tensor logits = tied_ ? nn::output_logits(x, embed_tokens->weight, embed_tokens->projection, vocabulary)
                               : nn::output_logits(x, output_projection, output_layer_, vocabulary);
  if (!final_logits_bias.defined()) return logits;
  const torch::Tensor bias = vocabulary ? final_logits_bias.index_select(0, vocabulary->ids()) : final_logits_bias;
  return logits + bias.to(logits.scalar_type());
}

}  // namespace csan::models
