#include "toolkit/nn/encoder_layer.h"

namespace csan::nn {

EncoderLayerImpl::EncoderLayerImpl(const TransformerLayerOptions& options) : options_(options) {
  self_attn = register_module("self_attn", MultiheadAttention(options.attention()));
  self_attn_layer_norm = register_module("self_attn_layer_norm", layer_norm(options.embed_dim));
  ffn = register_module("ffn", FeedForward(options.feed_forward()));
  final_layer_norm = register_module("final_layer_norm", layer_norm(options.embed_dim));
}

torch::Tensor EncoderLayerImpl::forward(torch::Tensor x, const torch::Tensor& padding_mask) {
  const bool pre = options_.normalize_before, training = is_training();
  torch::Tensor residual = x;
  if (pre) x = self_attn_layer_norm(x);
  AttentionCall call;
  call.key_padding_mask = padding_mask;
  x = self_attn(x, x, x, call);
  x = add_dropout_if(residual, x, options_.dropout, training);
  if (!pre) x = self_attn_layer_norm(x);

  residual = x;
  if (pre) x = final_layer_norm(x);
  x = add_dropout_if(residual, ffn(x), options_.dropout, training);
  if (!pre) x = final_layer_norm(x);
  return x;
}

}  // namespace csan::nn
