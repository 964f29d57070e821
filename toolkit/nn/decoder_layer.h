// One Transformer decoder layer: causal self-attention, attention over one encoder
// memory, feed-forward; a residual block (residual_block.h) around each.
#pragma once

#include <torch/torch.h>

#include <string>

#include "toolkit/nn/incremental_state.h"
#include "toolkit/nn/transformer_layer_options.h"

namespace csan::nn {

class DecoderLayerImpl : public torch::nn::Module {
 public:
  // cache_key prefixes this layer's entries in an IncrementalState ("decoder.layers.3");
  // the cross-attention's entries also name the memory it reads ("...encoder_attn.encoder").
  DecoderLayerImpl(const TransformerLayerOptions& options, std::string cache_key, std::string memory_name);
  // x [B, T, D] (with a state: only the new positions, the first at absolute position
  // `position`); memory [B, S, D]; memory_padding_mask [B, S] or undefined.
  torch::Tensor forward(torch::Tensor x, const torch::Tensor& memory, const torch::Tensor& memory_padding_mask,
                        IncrementalState* state = nullptr, int64_t position = 0);

  const std::string& memory_name() const { return memory_name_; }

  MultiheadAttention self_attn{nullptr};
  torch::nn::LayerNorm self_attn_layer_norm{nullptr};
  MultiheadAttention encoder_attn{nullptr};
  torch::nn::LayerNorm encoder_attn_layer_norm{nullptr};
  FeedForward ffn{nullptr};
  torch::nn::LayerNorm final_layer_norm{nullptr};

 private:
  TransformerLayerOptions options_;
  std::string cache_key_;
  std::string memory_name_;
};
TORCH_MODULE(DecoderLayer);

}  // namespace csan::nn
