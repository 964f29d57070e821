#include "toolkit/models/transformer_decoder.h"

#include <string>

namespace csan::models {

namespace {
// The one memory of a Transformer encoder.
const char* const kMemory = "encoder";
}  // namespace

TransformerDecoderImpl::TransformerDecoderImpl(const TransformerOptions& options, TokenEmbedding embed,
                                               bool embedding_owned_elsewhere, int64_t padding_idx)
    : DecoderFrameImpl(options, std::move(embed), embedding_owned_elsewhere, padding_idx) {
  for (int64_t i = 0; i < options.decoder_layers; ++i)
    layers->push_back(nn::DecoderLayer(options.layer, decoder_layer_key(i), kMemory));
  register_layers_and_output();
}

torch::Tensor TransformerDecoderImpl::forward(const torch::Tensor& prev_output_tokens, const EncoderOut& encoder_out,
                                              nn::IncrementalState* state, const torch::Tensor& positions) {
  // With a state, positions [0, cached) are in the self-attention caches already.
  const int64_t cached = state ? state->length(decoder_layer_key(0) + ".self_attn.prev_key") : 0;
  torch::Tensor x = embed(prev_output_tokens, cached);
  const Memory& memory = encoder_out.at(kMemory);
  const torch::Tensor& mask = memory.padding_mask;
  torch::Tensor attention_mask = mask.defined() && mask.any().item<bool>() ? mask : torch::Tensor();
  for (const auto& layer : *layers)
    x = layer->as<nn::DecoderLayer>()->forward(x, memory.out, attention_mask, state, cached);
  return output(x, positions, state);
}

}  // namespace csan::models
