// CCN's encoder (Li & Jiang 2020, Sec. 2.2, Fig. 2): two symmetric branches, left and
// right, fed the same source sentence (each with its own embedding dropout and, in
// training, its own input corruption) and sharing the token embedding. Layer by layer,
// each branch's attention takes its Q, K and V gates from the branches eq. 3-4 assign
// (crossed by default: the left branch takes V and K from the left input and Q from the
// right, the right branch the other way round); each branch keeps its own residual
// stream, feed-forward block and layer norms. The branches leave two memories, "left"
// and "right".
#pragma once

#include <torch/torch.h>

#include <array>

#include "toolkit/models/ccn_options.h"
#include "toolkit/models/encoder_out.h"
#include "toolkit/models/token_embedding.h"
#include "toolkit/models/transformer_options.h"
#include "toolkit/nn/encoder_layer.h"
#include "toolkit/nn/positional_embedding.h"

namespace csan::models {

using BranchPair = std::array<torch::Tensor, 2>;  // [kLeft], [kRight]

// One layer of both branches. A branch has a Transformer encoder layer's sublayers
// (attention, feed-forward, their norms); only where its attention reads from differs.
class CcnEncoderLayerImpl : public torch::nn::Module {
 public:
  CcnEncoderLayerImpl(const nn::TransformerLayerOptions& options, const std::array<EncoderGates, 2>& gates);
  // x: both branches' streams [B, S, D]; padding_mask [B, S] bool or undefined.
  BranchPair forward(const BranchPair& x, const torch::Tensor& padding_mask);

  nn::EncoderLayer left{nullptr}, right{nullptr};

 private:
  nn::EncoderLayer& branch(int b) { return b == kLeft ? left : right; }

  nn::TransformerLayerOptions options_;
  std::array<EncoderGates, 2> gates_;
};
TORCH_MODULE(CcnEncoderLayer);

class CcnEncoderImpl : public torch::nn::Module {
 public:
  // embed_tokens is registered here (the encoder owns a shared embedding).
  CcnEncoderImpl(const TransformerOptions& options, const CcnOptions& ccn, TokenEmbedding embed_tokens,
                 int64_t padding_idx);
  // The branches' inputs [B, S] (the same sentences; in training each corrupted its own
  // way, which keeps the padding in place) -> memories "left" and "right".
  EncoderOut forward(const torch::Tensor& left_tokens, const torch::Tensor& right_tokens);

  TokenEmbedding embed_tokens{nullptr};
  nn::PositionalEmbedding embed_positions{nullptr};
  torch::nn::ModuleList layers;
  torch::nn::LayerNorm left_layer_norm{nullptr}, right_layer_norm{nullptr};  // pre-norm only

 private:
  torch::Tensor embed(const torch::Tensor& tokens);

  TransformerOptions options_;
  int64_t padding_idx_;
  double embed_scale_;
};
TORCH_MODULE(CcnEncoder);

}  // namespace csan::models
