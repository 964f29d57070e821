// One Transformer encoder layer: self-attention then feed-forward, each wrapped as
// residual + dropout with a layer norm after (post-norm) or before (pre-norm).
#pragma once

#include <torch/torch.h>

#include "toolkit/nn/transformer_layer_options.h"

namespace csan::nn {

class EncoderLayerImpl : public torch::nn::Module {
 public:
  explicit EncoderLayerImpl(const TransformerLayerOptions& options);
  // x [B, S, D]; padding_mask [B, S] bool (true at padding) or undefined.
  torch::Tensor forward(torch::Tensor x, const torch::Tensor& padding_mask);

  MultiheadAttention self_attn{nullptr};
  torch::nn::LayerNorm self_attn_layer_norm{nullptr};
  FeedForward ffn{nullptr};
  torch::nn::LayerNorm final_layer_norm{nullptr};

 private:
  TransformerLayerOptions options_;
};
TORCH_MODULE(EncoderLayer);

}  // namespace csan::nn
