#include "toolkit/nn/decoder_layer.h"

#include "toolkit/nn/residual_block.h"

namespace csan::nn {

DecoderLayerImpl::DecoderLayerImpl(const TransformerLayerOptions& options, std::string cache_key,
                                   std::string memory_name)
    : options_(options), cache_key_(std::move(cache_key)), memory_name_(std::move(memory_name)) {
  self_attn = register_module("self_attn", MultiheadAttention(options.attention()));
  self_attn_layer_norm = register_module("self_attn_layer_norm", layer_norm(options.embed_dim));
  encoder_attn = register_module("encoder_attn", MultiheadAttention(options.attention()));
  encoder_attn_layer_norm = register_module("encoder_attn_layer_norm", layer_norm(options.embed_dim));
  ffn = register_module("ffn", FeedForward(options.feed_forward()));
  final_layer_norm = register_module("final_layer_norm", layer_norm(options.embed_dim));
}

torch::Tensor DecoderLayerImpl::forward(torch::Tensor x, const torch::Tensor& memory,
                                        const torch::Tensor& memory_padding_mask, IncrementalState* state,
                                        int64_t position) {
  const bool pre = options_.normalize_before, training = is_training();
  const double p = options_.dropout;

  // Right-padded targets never let a real position see a pad (they come after it), so
  // the self-attention needs only the causal mask.
  AttentionCall self_call;
  self_call.causal = true;
  self_call.state = state;
  self_call.cache_key = cache_key_ + ".self_attn";
  x = self_attn->before_sublayer(x, self_call);  // e.g. causal convolutions; x itself for most chains
  x = residual_block(x, self_attn_layer_norm, pre, p, training,
                     [&](const torch::Tensor& h) { return self_attn(h, h, h, self_call); });

  AttentionCall cross_call;
  cross_call.key_padding_mask = memory_padding_mask;
  cross_call.state = state;
  cross_call.cache_key = cache_key_ + ".encoder_attn." + memory_name_;
  cross_call.static_kv = true;
  cross_call.query_offset = position;
  if (state && state->attention_requested(cache_key_)) cross_call.attention_out = state->attention_slot();
  x = residual_block(x, encoder_attn_layer_norm, pre, p, training,
                     [&](const torch::Tensor& h) { return encoder_attn(h, memory, memory, cross_call); });

  return residual_block(x, final_layer_norm, pre, p, training, [&](const torch::Tensor& h) { return ffn(h); });
}

}  // namespace csan::nn
