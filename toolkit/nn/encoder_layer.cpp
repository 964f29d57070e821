#include "toolkit/nn/encoder_layer.h"

#include "toolkit/nn/residual_block.h"

namespace csan::nn {

EncoderLayerImpl::EncoderLayerImpl(const TransformerLayerOptions& options) : options_(options) {
  self_attn = register_module("self_attn", MultiheadAttention(options.attention()));
  self_attn_layer_norm = register_module("self_attn_layer_norm", layer_norm(options.embed_dim));
  ffn = register_module("ffn", FeedForward(options.feed_forward()));
  final_layer_norm = register_module("final_layer_norm", layer_norm(options.embed_dim));
}

torch::Tensor EncoderLayerImpl::forward(torch::Tensor x, const torch::Tensor& padding_mask) {
  const bool pre = options_.normalize_before, training = is_training();
  AttentionCall call;
  call.key_padding_mask = padding_mask;
  x = self_attn->before_sublayer(x, call);  // e.g. QANet's convolutions; x itself for most chains
  x = residual_block(x, self_attn_layer_norm, pre, options_.dropout, training,
                     [&](const torch::Tensor& h) { return self_attn(h, h, h, call); });
  return residual_block(x, final_layer_norm, pre, options_.dropout, training,
                        [&](const torch::Tensor& h) { return ffn(h); });
}

}  // namespace csan::nn
