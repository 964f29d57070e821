#include "toolkit/nn/decoder_layer.h"

namespace csan::nn {

DecoderLayerImpl::DecoderLayerImpl(const TransformerLayerOptions& options, std::string cache_key)
    : options_(options), cache_key_(std::move(cache_key)) {
  self_attn = register_module("self_attn", MultiheadAttention(options.attention()));
  self_attn_layer_norm = register_module("self_attn_layer_norm", layer_norm(options.embed_dim));
  encoder_attn = register_module("encoder_attn", MultiheadAttention(options.attention()));
  encoder_attn_layer_norm = register_module("encoder_attn_layer_norm", layer_norm(options.embed_dim));
  ffn = register_module("ffn", FeedForward(options.feed_forward()));
  final_layer_norm = register_module("final_layer_norm", layer_norm(options.embed_dim));
}

torch::Tensor DecoderLayerImpl::forward(torch::Tensor x, const torch::Tensor& encoder_out,
                                        const torch::Tensor& encoder_padding_mask, IncrementalState* state) {
  const bool pre = options_.normalize_before, training = is_training();

  // Right-padded targets never let a real position see a pad (they come after it), so
  // the self-attention needs only the causal mask.
  torch::Tensor residual = x;
  if (pre) x = self_attn_layer_norm(x);
  AttentionCall self_call;
  self_call.causal = true;
  self_call.state = state;
  self_call.cache_key = cache_key_ + ".self_attn";
  x = self_attn(x, x, x, self_call);
  x = add_dropout_if(residual, x, options_.dropout, training);
  if (!pre) x = self_attn_layer_norm(x);

  residual = x;
  if (pre) x = encoder_attn_layer_norm(x);
  AttentionCall cross_call;
  cross_call.key_padding_mask = encoder_padding_mask;
  cross_call.state = state;
  cross_call.cache_key = cache_key_ + ".encoder_attn";
  cross_call.static_kv = true;
  x = encoder_attn(x, encoder_out, encoder_out, cross_call);
  x = add_dropout_if(residual, x, options_.dropout, training);
  if (!pre) x = encoder_attn_layer_norm(x);

  residual = x;
  if (pre) x = final_layer_norm(x);
  x = add_dropout_if(residual, ffn(x), options_.dropout, training);
  if (!pre) x = final_layer_norm(x);
  return x;
}

}  // namespace csan::nn
