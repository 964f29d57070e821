// CCN's decoder (Li & Jiang 2020, Sec. 2.2, Fig. 2). Each layer: causal self-attention;
// then two branches, each an encoder-decoder attention with Q from the decoder and K and
// V from the memories eq. 3-4 assign (crossed by default: the left branch reads V from
// the "left" memory and K from the "right" one, the right branch the other way round),
// followed by the branch's own feed-forward block; the two branch outputs concatenated
// and projected 2d -> d; then the layer's feed-forward block. A residual block
// (nn/residual_block.h) wraps each sublayer, and one more wraps the two branches with the
// fusion, so the decoder's residual stream passes the fusion unchanged:
//   x = x + SelfAttn(LN(x))
//   h = LN_fusion(x);  y_b = h + Cross_b(LN(h));  y_b = y_b + FFN_b(LN(y_b))   (b = left, right)
//   x = x + W_fusion [y_left; y_right] + b_fusion
//   x = x + FFN(LN(x))
// (pre-norm; post-norm puts each LN after its residual sum instead). The Table 1
// parameter counts fix the pieces (one more attention, two more feed-forward blocks, the
// 2d -> d projection with bias and four more layer norms than a Transformer layer) but
// not this order; docs/architectures.md ("Why this block order") says why this one.
// Incremental decoding caches both branches' keys and values once per sentence under
// keys naming the memories read: "decoder.layers.3.left.encoder_attn.k_right.v_left".
#pragma once

#include <torch/torch.h>

#include <array>
#include <string>

#include "toolkit/models/ccn_options.h"
#include "toolkit/models/decoder_frame.h"
#include "toolkit/models/encoder_out.h"
#include "toolkit/models/token_embedding.h"
#include "toolkit/models/transformer_options.h"
#include "toolkit/nn/dense.h"
#include "toolkit/nn/incremental_state.h"
#include "toolkit/nn/positional_embedding.h"
#include "toolkit/nn/transformer_layer_options.h"

namespace csan::models {

// One decoder branch: an encoder-decoder attention and a feed-forward block.
class CcnDecoderBranchImpl : public torch::nn::Module {
 public:
  explicit CcnDecoderBranchImpl(const nn::TransformerLayerOptions& options);

  nn::MultiheadAttention encoder_attn{nullptr};
  torch::nn::LayerNorm encoder_attn_layer_norm{nullptr};
  nn::FeedForward ffn{nullptr};
  torch::nn::LayerNorm final_layer_norm{nullptr};
};
TORCH_MODULE(CcnDecoderBranch);

// The memories as a decoder layer reads them: [kLeft], [kRight], masks that mask
// nothing dropped.
using MemoryPair = std::array<Memory, 2>;

class CcnDecoderLayerImpl : public torch::nn::Module {
 public:
  // cache_key prefixes this layer's entries in an IncrementalState ("decoder.layers.3").
  CcnDecoderLayerImpl(const nn::TransformerLayerOptions& options, std::string cache_key,
                      const std::array<DecoderGates, 2>& gates);
  // x [B, T, D] (with a state: only the new positions, the first at absolute position
  // `position`).
  torch::Tensor forward(torch::Tensor x, const MemoryPair& memories, nn::IncrementalState* state = nullptr,
                        int64_t position = 0);

  nn::MultiheadAttention self_attn{nullptr};
  torch::nn::LayerNorm self_attn_layer_norm{nullptr};
  CcnDecoderBranch left{nullptr}, right{nullptr};
  nn::Dense fusion{nullptr};  // [D, 2D] and bias: concatenated branches -> D
  torch::nn::LayerNorm fusion_layer_norm{nullptr};
  nn::FeedForward ffn{nullptr};
  torch::nn::LayerNorm final_layer_norm{nullptr};

 private:
  torch::Tensor branch_forward(int b, const torch::Tensor& h, const MemoryPair& memories, nn::IncrementalState* state,
                               int64_t position);

  nn::TransformerLayerOptions options_;
  std::string cache_key_;
  std::array<DecoderGates, 2> gates_;
};
TORCH_MODULE(CcnDecoderLayer);

// Embedding + positions, dropout, N CCN decoder layers, a final layer norm in pre-norm
// mode and the output projection (tied to the embedding when shared): the Transformer
// decoder's frame around CCN layers.
class CcnDecoderImpl : public DecoderFrameImpl {
 public:
  // embed_tokens is registered here unless `embedding_owned_elsewhere` (shared with the
  // encoder), so that parameters() lists every tensor once.
  CcnDecoderImpl(const TransformerOptions& options, const CcnOptions& ccn, TokenEmbedding embed_tokens,
                 bool embedding_owned_elsewhere, int64_t padding_idx);
  // Logits [B, T', V]: T' = T, or with a state only the positions not yet cached. With
  // `positions` (int64 [N] into the flattened [B * T']): logits [N, V] of those only.
  torch::Tensor forward(const torch::Tensor& prev_output_tokens, const EncoderOut& encoder_out,
                        nn::IncrementalState* state, const torch::Tensor& positions = {});
};
TORCH_MODULE(CcnDecoder);

}  // namespace csan::models
