// Which keys each query may see, and how its scores are shaped: the one thing that
// differs between the Transformer's attention, CSAN's windows (1-D, 2-D across heads)
// and the tagger's variants. MultiheadAttention calls its scope between QK^T and the
// softmax (and once after it, for policies such as a convolution over the attention
// matrix); the default is full scope. A scope is a Module so that variants with
// parameters (a learnable temperature, relative-position biases) register them.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <torch/torch.h>

#include "toolkit/core/config.h"
#include "toolkit/core/registry.h"

namespace csan::nn {

// Where the scores come from, so that position-dependent policies can build masks.
struct ScopeContext {
  int64_t query_offset = 0;  // absolute position of the first query (incremental decoding)
  bool causal = false;       // keys after the query are already masked
  bool self_attention = true;
};

// Queries, keys and values split into heads, for scopes that compute the attention
// themselves (AttentionScope::attend).
struct HeadInputs {
  torch::Tensor q;                 // [B, H, Tq, d], already scaled by 1/sqrt(d)
  torch::Tensor k, v;              // [B, H, Tk, d]; with an incremental state, the whole prefix
  torch::Tensor key_padding_mask;  // [B, Tk] bool, true at padding; undefined: none
  double dropout = 0.0;            // on the attention weights; 0 outside training
};

class AttentionScope : public torch::nn::Module {
 public:
  // A scope whose queries attend jointly over keys that one [Tq, Tk] score matrix per
  // head cannot hold (2-D CSAN: keys of neighbouring heads), or that can skip most of
  // QK^T (banded windows), returns the per-head context [B, H, Tq, d] itself and then
  // also applies context.causal and the padding mask. Undefined (the default): the
  // module computes scores -> shape_scores -> softmax -> shape_probs -> weights x V.
  virtual torch::Tensor attend(const HeadInputs&, const ScopeContext&) { return {}; }

  // scores: [B, H, Tq, Tk], already scaled and masked (-inf at padding/future keys).
  // Returns the shaped scores (may modify in place and return the same tensor).
  virtual torch::Tensor shape_scores(torch::Tensor scores, const ScopeContext& context) = 0;
  // probs: [B, H, Tq, Tk] after the softmax; default leaves them alone.
  virtual torch::Tensor shape_probs(torch::Tensor probs, const ScopeContext&) { return probs; }
};

// Every query sees every (unmasked) key.
class FullScope : public AttentionScope {
 public:
  torch::Tensor shape_scores(torch::Tensor scores, const ScopeContext&) override { return scores; }
};

// Where an attention sits in a model; factories may configure per site (e.g. CSAN uses
// windows in the encoder's self-attention only).
struct AttentionSite {
  bool in_encoder = true;
  bool self_attention = true;
  int64_t layer = 0;
  int64_t num_heads = 1;
};

using ScopeFactory = std::function<std::shared_ptr<AttentionScope>(const core::Config&, const AttentionSite&)>;

// "full" is registered here; variants register next to their definition.
core::Registry<ScopeFactory>& scope_registry();

}  // namespace csan::nn
