// The one multi-head attention of the toolkit (Vaswani et al. 2017, fairseq's
// MultiheadAttention semantics, batch first). Q, K and V projections live in one
// [3D, D] weight: self-attention runs one fused GEMM, cross-attention one for Q and one
// fused for K/V, and crossed co-attention (q, k, v from different branches) three; the
// parameter count is that of four D x D projections (+ biases if enabled) either way.
// What varies between attention variants is its chain of entries (attention_chain.h),
// installed per site by the model's builder; an empty chain is full-scope attention.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <string>

#include "toolkit/nn/attention_chain.h"
#include "toolkit/nn/attention_site.h"
#include "toolkit/nn/dense.h"
#include "toolkit/nn/incremental_state.h"

namespace csan::nn {

struct MultiheadAttentionOptions {
  int64_t embed_dim = 512;
  int64_t num_heads = 8;
  double attention_dropout = 0.0;
  bool bias = true;  // false: projections without bias (NVIDIA fairseq fork, CCN paper)
  // false: the heads' concatenation is the output (the convoluted-attention tagger's
  // attention has no output projection; out_proj is then null).
  bool output_projection = true;
};

struct AttentionCall {
  torch::Tensor key_padding_mask;  // [B, Tk] bool, true at padding; undefined: none
  bool causal = false;             // query i sees keys <= its absolute position
  IncrementalState* state = nullptr;
  std::string cache_key;  // prefix of this module's entries in state
  // Keys/values do not change between steps (encoder output): projected once, then read
  // from the state; `key`/`value` may be undefined once cached.
  bool static_kv = false;
  // Absolute position of the first query, for attention entries that use positions:
  // -1 lets self-attention derive it (keys 0 .. Tk-1 end at the last query); a
  // cross-attention's caller passes the decoder position (-1 there means 0).
  int64_t query_offset = -1;
  // When set, receives the attention probabilities averaged over the heads, [B, Tq, Tk]
  // float (alignments: csan-generate --print-alignment). The call then takes the general
  // path, whose probabilities are explicit.
  torch::Tensor* attention_out = nullptr;
};

class MultiheadAttentionImpl : public ProjectingModule {
 public:
  explicit MultiheadAttentionImpl(const MultiheadAttentionOptions& options);
  // The fused q|k|v weight (out_proj is a Dense of its own).
  std::vector<Site> projection_sites() override { return {{"in_proj_weight", &in_proj_weight, &in_proj}}; }

  // query [B, Tq, D], key/value [B, Tk, D] -> [B, Tq, D]. Pass the same tensor as key
  // and value (and query) to get the fused projections. With a state, keys/values of
  // earlier steps are read from it and this step's are appended (self-attention).
  torch::Tensor forward(const torch::Tensor& query, const torch::Tensor& key, const torch::Tensor& value,
                        const AttentionCall& call = {});

  // The layer's input x [B, T, D] through the sublayers the chain's entries run before
  // this attention's sublayer (x itself when there are none). `call` as for forward():
  // its padding mask, causality and incremental state.
  torch::Tensor before_sublayer(const torch::Tensor& x, const AttentionCall& call);

  // Appends an entry to this attention's chain (see AttentionChainImpl::add).
  void add_entry(const std::string& name, std::shared_ptr<AttentionEntry> entry) {
    chain_->add(name, std::move(entry));
  }
  const AttentionChainImpl& chain() const { return *chain_; }
  // Where this attention sits; its entries see it in AttentionInputs.
  void set_site(const AttentionSite& site) { site_ = site; }
  const AttentionSite& site() const { return site_; }
  const MultiheadAttentionOptions& options() const { return options_; }

  torch::Tensor in_proj_weight;  // [3D, D]: rows q | k | v; undefined once converted
  torch::Tensor in_proj_bias;    // [3D] or undefined
  Projection in_proj;            // of in_proj_weight
  Dense out_proj{nullptr};

 private:
  torch::Tensor project(const torch::Tensor& x, int64_t first, int64_t count) const;
  torch::Tensor split_heads(const torch::Tensor& x) const;  // [B, T, D] -> [B, H, T, d]
  torch::Tensor output(const torch::Tensor& heads) { return out_proj ? out_proj(heads) : heads; }
  // What the chain's entries see of a call: q [B, Tq, D] and k [Bk, Tk, D] as projected
  // (k undefined when the keys are cached).
  AttentionInputs entry_inputs(const torch::Tensor& q, const torch::Tensor& k, int64_t tk, int64_t query_offset,
                               const torch::Tensor& key_padding_mask) const;
  // out_proj(context) plus the chain's output terms; context [B, Tq, D].
  torch::Tensor project_output(const torch::Tensor& context, const AttentionInputs& in);

  // forward() in stages: project the inputs; then one of three ways to attend, the fused
  // kernel (whole sequences, no incremental state), the decoding kernel (one new position
  // per row against the caches) or the general path (anything else: entries that need the
  // keys or compute attention themselves, dropout, autograd through the caches); the cache
  // handling sits between the first and the other two.
  struct Step {
    torch::Tensor q, k, v;      // q [B, Tq, D]; k, v [Bk, Tk, D] projected, then (use_caches) [Bk, H, Tk, d]
    torch::Tensor q_projected;  // q [B, Tq, D] as projected and scaled: what the chain's entries see
    bool self_attention = false;
    bool kv_cached = false;      // static keys/values already in the state (k, v undefined until use_caches)
    std::string k_name, v_name;  // their entries in the state
  };
  Step project_inputs(const torch::Tensor& query, const torch::Tensor& key, const torch::Tensor& value,
                      const AttentionCall& call);
  // The absolute position of query 0 once the number of keys `tk` is known.
  int64_t query_offset(const Step& step, const AttentionCall& call, int64_t tk) const;
  bool fused_kernel_applies(const Step& step, const AttentionCall& call) const;
  torch::Tensor fused_kernel(const Step& step, const AttentionCall& call);
  // Reads static keys/values from the state, or splits this call's into heads and stores
  // them (static: set once; self-attention: appended to the growing caches).
  void use_caches(Step& step, const AttentionCall& call);
  bool decoding_kernel_applies(const Step& step, const AttentionCall& call) const;
  torch::Tensor decoding_kernel(const Step& step, const AttentionCall& call);
  torch::Tensor general_path(const Step& step, const AttentionCall& call);
  // softmax(q kᵀ + masks + bias) v with the chain's probability and value hooks; q already
  // scaled; q [B, H, Tq, d], k, v [B, H, Tk, d] -> [B, H, Tq, d].
  torch::Tensor scaled_dot_product(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                   const torch::Tensor& key_padding_mask, bool causal, const torch::Tensor& bias,
                                   double dropout, const AttentionInputs& inputs, torch::Tensor* attention_out);

  MultiheadAttentionOptions options_;
  int64_t head_dim_;
  double scaling_;
  AttentionChain chain_{nullptr};
  AttentionSite site_;
};
TORCH_MODULE(MultiheadAttention);

}  // namespace csan::nn
