// What differs between the Transformer's attention, CSAN's windows, the locality
// baselines and the tagger's variants is a chain of small entries that MultiheadAttention
// calls at fixed points (toolkit/nn/attention_chain.h):
//
//   q, k, v projected ─ scale ─▶ scores = scaling * q k^T + mask + Σ bias ─▶ softmax
//     ─▶ probabilities (transform) ─▶ probs · V + Σ values ─▶ output projection
//
// An entry does one or more of: scale q/k/v (a learnable temperature), add a per-head
// bias to the scores (a window or direction mask as -inf, relative positions, a Gaussian
// whose centre comes from q), transform the probabilities after the softmax (a
// convolution over the attention matrix), add a value-side term (relative values), or
// compute the whole attention itself (CSAN's banded and 2-D kernels). Two hooks sit
// outside the scores: a term added to the output from the attention's context (BiBloSAN's
// inter-block attention over the intra-block results), and a sublayer the layer runs on
// its input before this attention's sublayer (QANet's convolutions). uses() says which,
// so the module picks its kernels without trial calls: a chain of scales, biases and
// those two hooks keeps the fused training kernel and the incremental decoding kernel,
// anything else runs the general path. Entries are Modules, so those with parameters
// register them.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "toolkit/core/config.h"
#include "toolkit/core/registry.h"
#include "toolkit/nn/attention_site.h"
#include "toolkit/nn/incremental_state.h"

namespace csan::nn {

// What an entry sees of one attention call.
struct AttentionInputs {
  // The projections split into heads, as views: q [B, Tq, H, d] (not yet scaled),
  // k [Bk, Tk, H, d]. k is undefined in an incremental decoding step, whose keys are in
  // the cache, unless an entry of the chain uses kNeedsKeys.
  torch::Tensor q, k;
  int64_t query_length = 0, key_length = 0;
  // Absolute position of query 0. Self-attention keys sit at positions 0 .. Tk-1, so an
  // incremental step's query is at Tk - 1; cross-attention queries are decoder positions.
  int64_t query_offset = 0;
  torch::Tensor key_padding_mask;  // [Bk, Tk] bool, true at padding; undefined: none
  double scaling = 1.0;            // scores = scaling * q.k + bias
  const AttentionSite* site = nullptr;
  bool training = false;

  torch::Tensor query_positions() const;  // [Tq] int64, absolute
  torch::Tensor key_positions() const;    // [Tk] int64
  torch::Device device() const { return q.device(); }
};

// Queries, keys and values split into heads, for an entry that computes the attention
// itself (kComputes).
struct HeadInputs {
  torch::Tensor q;                 // [B, H, Tq, d], already scaled by 1/sqrt(d)
  torch::Tensor k, v;              // [B, H, Tk, d]; with an incremental state, the whole prefix
  torch::Tensor key_padding_mask;  // [B, Tk] bool, true at padding; undefined: none
  double dropout = 0.0;            // on the attention weights; 0 outside training
};

// What an entry that runs a sublayer before the attention's sublayer (kBefore) sees.
struct BeforeInputs {
  torch::Tensor padding_mask;  // [B, T] bool, true at padding; undefined: none
  bool causal = false;         // a position must not see later ones (decoder)
  // Incremental decoding: x holds only the new positions; the entry keeps what it needs
  // of earlier ones in `state` under keys starting with `cache_key`.
  IncrementalState* state = nullptr;
  std::string cache_key;
  bool training = false;
};

struct ScopeContext {
  int64_t query_offset = 0;  // absolute position of the first query (incremental decoding)
  bool causal = false;       // keys after the query must stay hidden
  bool self_attention = true;
};

class AttentionEntry : public torch::nn::Module {
 public:
  enum Use : unsigned {
    kScale = 1,          // scale(): q, k, v rescaled after the projections
    kBias = 2,           // bias(): added to the scores
    kProbabilities = 4,  // probabilities(): transforms softmax(scores)
    kValues = 8,         // values(): a term added to probs · V
    kComputes = 16,      // attend(): computes the attention itself (at most one per chain)
    kNeedsKeys = 32,     // bias() reads inputs.k, also in incremental steps
    kOutput = 64,        // output(): a term added to the projected output, from the context
    kBefore = 128,       // before(): a sublayer run on the layer's input before this attention's
  };
  virtual unsigned uses() const = 0;

  // q [B, Tq, H*d], k and v [Bk, Tk, H*d] as projected (k and v undefined when they come
  // from a cache): replaced by their scaled versions.
  virtual void scale(torch::Tensor& q, torch::Tensor& k, torch::Tensor& v) { (void)q, (void)k, (void)v; }
  // An additive bias broadcastable to the scores [B, H, Tq, Tk]: 4-D, [B or 1, H or 1, Tq,
  // Tk]; -inf hides a key. B is the number of query rows (beams included).
  virtual torch::Tensor bias(const AttentionInputs& in) {
    (void)in;
    return {};
  }
  // probs [B, H, Tq, Tk] after the softmax -> the probabilities that weight the values.
  virtual torch::Tensor probabilities(torch::Tensor probs, const AttentionInputs& in) {
    (void)in;
    return probs;
  }
  // A term [B, H, Tq, d] added to probs · V (e.g. relative-position values).
  virtual torch::Tensor values(const torch::Tensor& probs, const AttentionInputs& in) {
    (void)probs, (void)in;
    return {};
  }
  // context [B, Tq, H*d] (the heads side by side, before the output projection) -> a
  // term [B, Tq, D] added to the projected output.
  virtual torch::Tensor output(const torch::Tensor& context, const AttentionInputs& in) {
    (void)context, (void)in;
    return {};
  }
  // x [B, T, D], the layer's input -> the input of the attention's sublayer (the whole
  // sublayer, residual and norm included, is the entry's).
  virtual torch::Tensor before(const torch::Tensor& x, const BeforeInputs& in) {
    (void)in;
    return x;
  }
  // The per-head context [B, H, Tq, d], with the padding mask and context.causal applied,
  // plus `bias` (the other entries' biases, [B or 1, H or 1, Tq, Tk] or undefined).
  // Undefined: this call falls back to the general path.
  virtual torch::Tensor attend(const HeadInputs& in, const ScopeContext& context, const torch::Tensor& bias) {
    (void)in, (void)context, (void)bias;
    return {};
  }
};

// An entry kind as registered: its recipe keys, their defaults and how to build it.
struct AttentionEntrySpec {
  std::string doc;  // one line, for --help style listings
  // Declares the entry's recipe keys (model.<entry>.*) without defaults: they get values
  // only in recipes whose chains name the entry (see defaults).
  std::function<void(core::ConfigSchema&)> declare_options;
  // The values of those keys when a chain names the entry and the recipe or the arch
  // preset leaves them unset.
  std::function<std::map<std::string, core::Value>()> defaults;
  // The entry for this site, or nullptr where it does not apply (e.g. a layer the entry's
  // options leave out). Throws csan::Error naming the key for a site it cannot serve.
  std::function<std::shared_ptr<AttentionEntry>(const core::Config&, const AttentionSite&)> build;
};

// Entries register next to their definition, in files named *_entry.cpp (the build links
// every such file's registrations, see CSAN_REGISTRATION_ANCHOR).
core::Registry<AttentionEntrySpec>& attention_entry_registry();

}  // namespace csan::nn
