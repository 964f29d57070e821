#include "toolkit/models/ccn_encoder.h"

#include <cmath>

#include "toolkit/nn/residual_block.h"

namespace csan::models {

CcnEncoderLayerImpl::CcnEncoderLayerImpl(const nn::TransformerLayerOptions& options,
                                         const std::array<EncoderGates, 2>& gates)
    : options_(options), gates_(gates) {
  left = register_module("left", nn::EncoderLayer(options));
  right = register_module("right", nn::EncoderLayer(options));
}

BranchPair CcnEncoderLayerImpl::forward(const BranchPair& x, const torch::Tensor& padding_mask) {
  const bool pre = options_.normalize_before, training = is_training();
  const double p = options_.dropout;
  // What a branch offers the other branch's gates: its stream as its own attention
  // reads it (normalized by its own norm in pre-norm), computed when a gate asks.
  BranchPair offered;
  auto offered_by = [&](int source) -> const torch::Tensor& {
    if (!offered[source].defined()) offered[source] = pre ? branch(source)->self_attn_layer_norm(x[source]) : x[source];
    return offered[source];
  };
  nn::AttentionCall call;
  call.key_padding_mask = padding_mask;
  BranchPair y;
  for (int b : {kLeft, kRight}) {
    const EncoderGates& gate = gates_[b];
    auto& layer = branch(b);
    // Eq. 3 (left) and eq. 4 (right): y = softmax(Q W^Q (K W^K)^T) V W^V with Q, K, V
    // from the branches the gates name, around the branch's own residual stream.
    y[b] = nn::residual_block(x[b], layer->self_attn_layer_norm, pre, p, training, [&](const torch::Tensor& h) {
      auto from = [&](int source) -> const torch::Tensor& { return source == b ? h : offered_by(source); };
      return layer->self_attn(from(gate.query), from(gate.key), from(gate.value), call);
    });
    y[b] = nn::residual_block(y[b], layer->final_layer_norm, pre, p, training,
                              [&](const torch::Tensor& h) { return layer->ffn(h); });
  }
  return y;
}

CcnEncoderImpl::CcnEncoderImpl(const TransformerOptions& options, const CcnOptions& ccn, TokenEmbedding embed,
                               int64_t padding_idx)
    : options_(options), padding_idx_(padding_idx) {
  const int64_t d = options.layer.embed_dim;
  embed_scale_ = options.no_scale_embedding ? 1.0 : std::sqrt(static_cast<double>(d));
  embed_tokens = register_module("embed_tokens", std::move(embed));
  embed_positions =
      register_module("embed_positions", nn::PositionalEmbedding(nn::PositionalEmbeddingOptions{
                                             options.max_source_positions, d, padding_idx, options.learned_pos}));
  const auto gates = ccn.encoder_gates();
  for (int64_t i = 0; i < options.encoder_layers; ++i) layers->push_back(CcnEncoderLayer(options.layer, gates));
  register_module("layers", layers);
  if (options.layer.normalize_before) {
    left_layer_norm = register_module("left_layer_norm", nn::layer_norm(d));
    right_layer_norm = register_module("right_layer_norm", nn::layer_norm(d));
  }
}

torch::Tensor CcnEncoderImpl::embed(const torch::Tensor& tokens) {
  torch::Tensor x = embed_tokens(tokens);
  if (embed_scale_ != 1.0) x = x * embed_scale_;
  // Each branch draws its own dropout mask (Sec. 2.2: the branches' inputs differ).
  return nn::dropout_if(x + embed_positions(tokens).to(x.scalar_type()), options_.layer.dropout, is_training());
}

EncoderOut CcnEncoderImpl::forward(const torch::Tensor& left_tokens, const torch::Tensor& right_tokens) {
  torch::Tensor padding_mask = left_tokens.eq(padding_idx_);
  BranchPair x = {embed(left_tokens), embed(right_tokens)};
  // Without padding in the batch the mask would only cost a masked_fill per attention.
  torch::Tensor attention_mask = padding_mask.any().item<bool>() ? padding_mask : torch::Tensor();
  for (const auto& layer : *layers) x = layer->as<CcnEncoderLayer>()->forward(x, attention_mask);
  if (left_layer_norm) x = {left_layer_norm(x[kLeft]), right_layer_norm(x[kRight])};
  EncoderOut out;
  out.add(branch_name(kLeft), {x[kLeft], padding_mask});
  out.add(branch_name(kRight), {x[kRight], padding_mask});
  return out;
}

}  // namespace csan::models
