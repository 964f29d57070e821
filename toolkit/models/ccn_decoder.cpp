#include "toolkit/models/ccn_decoder.h"

#include "toolkit/nn/init.h"
#include "toolkit/nn/residual_block.h"

namespace csan::models {

namespace {
std::string ccn_layer_key(int64_t i) { return "decoder.layers." + std::to_string(i); }
}  // namespace

CcnDecoderBranchImpl::CcnDecoderBranchImpl(const nn::TransformerLayerOptions& options) {
  encoder_attn = register_module("encoder_attn", nn::MultiheadAttention(options.attention()));
  encoder_attn_layer_norm = register_module("encoder_attn_layer_norm", nn::layer_norm(options.embed_dim));
  ffn = register_module("ffn", nn::FeedForward(options.feed_forward()));
  final_layer_norm = register_module("final_layer_norm", nn::layer_norm(options.embed_dim));
}

CcnDecoderLayerImpl::CcnDecoderLayerImpl(const nn::TransformerLayerOptions& options, std::string cache_key,
                                         const std::array<DecoderGates, 2>& gates)
    : options_(options), cache_key_(std::move(cache_key)), gates_(gates) {
  const int64_t d = options.embed_dim;
  self_attn = register_module("self_attn", nn::MultiheadAttention(options.attention()));
  self_attn_layer_norm = register_module("self_attn_layer_norm", nn::layer_norm(d));
  left = register_module("left", CcnDecoderBranch(options));
  right = register_module("right", CcnDecoderBranch(options));
  fusion = register_module("fusion", nn::Dense(2 * d, d));
  nn::init_xavier_uniform(fusion->weight);
  nn::init_constant(fusion->bias, 0.0);
  fusion_layer_norm = register_module("fusion_layer_norm", nn::layer_norm(d));
  ffn = register_module("ffn", nn::FeedForward(options.feed_forward()));
  final_layer_norm = register_module("final_layer_norm", nn::layer_norm(d));
}

torch::Tensor CcnDecoderLayerImpl::branch_forward(int b, const torch::Tensor& h, const MemoryPair& memories,
                                                  nn::IncrementalState* state, int64_t position) {
  const bool pre = options_.normalize_before, training = is_training();
  const double p = options_.dropout;
  auto& branch = b == kLeft ? left : right;
  const DecoderGates& gate = gates_[b];
  const Memory &keys = memories[gate.key], &values = memories[gate.value];
  nn::AttentionCall call;
  call.key_padding_mask = keys.padding_mask;
  call.state = state;
  call.cache_key =
      cache_key_ + "." + branch_name(b) + ".encoder_attn.k_" + branch_name(gate.key) + ".v_" + branch_name(gate.value);
  call.static_kv = true;
  call.query_offset = position;
  // Eq. 3 (left) and eq. 4 (right) with alpha(Q) = beta(Q) = 'decoder'.
  torch::Tensor y =
      nn::residual_block(h, branch->encoder_attn_layer_norm, pre, p, training,
                         [&](const torch::Tensor& q) { return branch->encoder_attn(q, keys.out, values.out, call); });
  return nn::residual_block(y, branch->final_layer_norm, pre, p, training,
                            [&](const torch::Tensor& z) { return branch->ffn(z); });
}

torch::Tensor CcnDecoderLayerImpl::forward(torch::Tensor x, const MemoryPair& memories, nn::IncrementalState* state,
                                           int64_t position) {
  const bool pre = options_.normalize_before, training = is_training();
  const double p = options_.dropout;
  nn::AttentionCall self_call;
  self_call.causal = true;
  self_call.state = state;
  self_call.cache_key = cache_key_ + ".self_attn";
  x = nn::residual_block(x, self_attn_layer_norm, pre, p, training,
                         [&](const torch::Tensor& h) { return self_attn(h, h, h, self_call); });
  // The two branches, concatenated and projected 2d -> d (Sec. 2.2).
  x = nn::residual_block(x, fusion_layer_norm, pre, p, training, [&](const torch::Tensor& h) {
    return fusion(torch::cat(
        {branch_forward(kLeft, h, memories, state, position), branch_forward(kRight, h, memories, state, position)},
        -1));
  });
  return nn::residual_block(x, final_layer_norm, pre, p, training, [&](const torch::Tensor& h) { return ffn(h); });
}

CcnDecoderImpl::CcnDecoderImpl(const TransformerOptions& options, const CcnOptions& ccn, TokenEmbedding embed,
                               bool embedding_owned_elsewhere, int64_t padding_idx)
    : DecoderFrameImpl(options, std::move(embed), embedding_owned_elsewhere, padding_idx) {
  const auto gates = ccn.decoder_gates();
  for (int64_t i = 0; i < options.decoder_layers; ++i)
    layers->push_back(CcnDecoderLayer(options.layer, ccn_layer_key(i), gates));
  register_layers_and_output();
}

torch::Tensor CcnDecoderImpl::forward(const torch::Tensor& prev_output_tokens, const EncoderOut& encoder_out,
                                      nn::IncrementalState* state, const torch::Tensor& positions) {
  // With a state, positions [0, cached) are in the self-attention caches already.
  const int64_t cached = state ? state->length(ccn_layer_key(0) + ".self_attn.prev_key") : 0;
  torch::Tensor x = embed(prev_output_tokens, cached);

  MemoryPair memories;
  for (int b : {kLeft, kRight}) {
    memories[b] = encoder_out.at(branch_name(b));
    const torch::Tensor& mask = memories[b].padding_mask;
    if (mask.defined() && !mask.any().item<bool>()) memories[b].padding_mask = torch::Tensor();
  }
  for (const auto& layer : *layers) x = layer->as<CcnDecoderLayer>()->forward(x, memories, state, cached);
  return output(x, positions, state);
}

}  // namespace csan::models
