// One Transformer decoder layer: causal self-attention, attention over the encoder
// output, feed-forward; residual + dropout around each, post- or pre-norm.
#pragma once

#include <string>

#include <torch/torch.h>

#include "toolkit/nn/incremental_state.h"
#include "toolkit/nn/transformer_layer_options.h"

namespace csan::nn {

class DecoderLayerImpl : public torch::nn::Module {
 public:
  // cache_key prefixes this layer's entries in an IncrementalState ("decoder.layers.3").
  DecoderLayerImpl(const TransformerLayerOptions& options, std::string cache_key);
  // x [B, T, D] (with a state: only the new positions); encoder_out [B, S, D];
  // encoder_padding_mask [B, S] or undefined.
  torch::Tensor forward(torch::Tensor x, const torch::Tensor& encoder_out, const torch::Tensor& encoder_padding_mask,
                        IncrementalState* state = nullptr);

  MultiheadAttention self_attn{nullptr};
  torch::nn::LayerNorm self_attn_layer_norm{nullptr};
  MultiheadAttention encoder_attn{nullptr};
  torch::nn::LayerNorm encoder_attn_layer_norm{nullptr};
  FeedForward ffn{nullptr};
  torch::nn::LayerNorm final_layer_norm{nullptr};

 private:
  TransformerLayerOptions options_;
  std::string cache_key_;
};
TORCH_MODULE(DecoderLayer);

}  // namespace csan::nn
