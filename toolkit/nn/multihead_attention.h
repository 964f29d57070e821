// The one multi-head attention of the toolkit (Vaswani et al. 2017, fairseq's
// MultiheadAttention semantics, batch first). Q, K and V projections live in one
// [3D, D] weight: self-attention runs one fused GEMM, cross-attention one for Q and one
// fused for K/V, and crossed co-attention (q, k, v from different branches) three; the
// parameter count is that of four D x D projections (+ biases if enabled) either way.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <torch/torch.h>

#include "toolkit/nn/attention_scope.h"
#include "toolkit/nn/dense.h"
#include "toolkit/nn/incremental_state.h"

namespace csan::nn {

struct MultiheadAttentionOptions {
  int64_t embed_dim = 512;
  int64_t num_heads = 8;
  double attention_dropout = 0.0;
  bool bias = true;  // false: projections without bias (NVIDIA fairseq fork, CCN paper)
};

struct AttentionCall {
  torch::Tensor key_padding_mask;  // [B, Tk] bool, true at padding; undefined: none
  bool causal = false;             // query i sees keys <= its absolute position
  IncrementalState* state = nullptr;
  std::string cache_key;           // prefix of this module's entries in state
  // Keys/values do not change between steps (encoder output): projected once, then read
  // from the state; `key`/`value` may be undefined once cached.
  bool static_kv = false;
};

class MultiheadAttentionImpl : public torch::nn::Module {
 public:
  explicit MultiheadAttentionImpl(const MultiheadAttentionOptions& options);

  // query [B, Tq, D], key/value [B, Tk, D] -> [B, Tq, D]. Pass the same tensor as key
  // and value (and query) to get the fused projections. With a state, keys/values of
  // earlier steps are read from it and this step's are appended (self-attention).
  torch::Tensor forward(const torch::Tensor& query, const torch::Tensor& key, const torch::Tensor& value,
                        const AttentionCall& call = {});

  void set_scope(std::shared_ptr<AttentionScope> scope);
  AttentionScope& scope() { return *scope_; }
  const MultiheadAttentionOptions& options() const { return options_; }

  torch::Tensor in_proj_weight;  // [3D, D]: rows q | k | v
  torch::Tensor in_proj_bias;    // [3D] or undefined
  Dense out_proj{nullptr};

 private:
  torch::Tensor project(const torch::Tensor& x, int64_t first, int64_t count) const;
  torch::Tensor split_heads(const torch::Tensor& x) const;  // [B, T, D] -> [B, H, T, d]

  MultiheadAttentionOptions options_;
  int64_t head_dim_;
  double scaling_;
  std::shared_ptr<AttentionScope> scope_;
};
TORCH_MODULE(MultiheadAttention);

}  // namespace csan::nn
