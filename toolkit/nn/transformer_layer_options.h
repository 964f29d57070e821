// Options shared by Transformer encoder and decoder layers (fairseq's names).
#pragma once

#include <cstdint>
#include <string>

#include <torch/torch.h>

#include "toolkit/nn/feed_forward.h"
#include "toolkit/nn/multihead_attention.h"

namespace csan::nn {

struct TransformerLayerOptions {
  int64_t embed_dim = 512;
  int64_t ffn_dim = 2048;
  int64_t heads = 8;
  double dropout = 0.1;
  double attention_dropout = 0.0;
  double activation_dropout = 0.0;
  std::string activation = "relu";
  bool normalize_before = false;  // pre-norm; default post-norm as in Vaswani et al.
  bool attention_bias = true;

  MultiheadAttentionOptions attention() const { return {embed_dim, heads, attention_dropout, attention_bias}; }
  FeedForwardOptions feed_forward() const { return {embed_dim, ffn_dim, activation, activation_dropout}; }
};

// Dropout of x in training with p > 0, else x (fused_dropout.h).
torch::Tensor dropout_if(const torch::Tensor& x, double p, bool training);
// residual + dropout_if(x, p, training), in one pass in training.
torch::Tensor add_dropout_if(const torch::Tensor& residual, const torch::Tensor& x, double p, bool training);

inline torch::nn::LayerNorm layer_norm(int64_t dim) {
  return torch::nn::LayerNorm(torch::nn::LayerNormOptions({dim}).eps(1e-5));
}

}  // namespace csan::nn
