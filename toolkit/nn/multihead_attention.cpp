#include "toolkit/nn/multihead_attention.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "toolkit/core/error.h"
#include "toolkit/nn/decoding_attention.h"
#include "toolkit/nn/fused_attention.h"
#include "toolkit/nn/hidden_score.h"
#include "toolkit/nn/init.h"

namespace csan::nn {

namespace F = torch::nn::functional;

MultiheadAttentionImpl::MultiheadAttentionImpl(const MultiheadAttentionOptions& options) : options_(options) {
  const int64_t d = options.embed_dim;
  if (options.num_heads <= 0 || d % options.num_heads != 0)
    throw Error("attention: embed_dim " + std::to_string(d) + " is not divisible by " +
                std::to_string(options.num_heads) + " heads");
  head_dim_ = d / options.num_heads;
  scaling_ = 1.0 / std::sqrt(static_cast<double>(head_dim_));

  in_proj_weight = register_parameter("in_proj_weight", torch::empty({3 * d, d}));
  if (options.bias) in_proj_bias = register_parameter("in_proj_bias", torch::empty({3 * d}));
  if (options.output_projection) out_proj = register_module("out_proj", Dense(d, d, options.bias));
  chain_ = register_module("chain", AttentionChain());
  site_.num_heads = options.num_heads;
  site_.embed_dim = d;

  // fairseq's initialization: each of Q, K, V is its own D x D Xavier matrix (gain
  // 1/sqrt(2)), input biases keep nn.Linear's default, the output bias starts at zero.
  for (int64_t i = 0; i < 3; ++i) init_xavier_uniform(in_proj_weight.narrow(0, i * d, d), 1.0 / std::sqrt(2.0));
  if (options.bias) init_uniform(in_proj_bias, -1.0 / std::sqrt(double(d)), 1.0 / std::sqrt(double(d)));
  if (out_proj) init_xavier_uniform(out_proj->weight);
  if (out_proj && options.bias) init_constant(out_proj->bias, 0.0);
}

AttentionInputs MultiheadAttentionImpl::entry_inputs(const torch::Tensor& q, const torch::Tensor& k, int64_t tk,
                                                     int64_t query_offset,
                                                     const torch::Tensor& key_padding_mask) const {
  AttentionInputs in;
  in.q = q.view({q.size(0), q.size(1), options_.num_heads, head_dim_});
  if (k.defined()) in.k = k.view({k.size(0), k.size(1), options_.num_heads, head_dim_});
  in.query_length = q.size(1);
  in.key_length = tk;
  in.query_offset = query_offset;
  in.key_padding_mask = key_padding_mask;
  in.scaling = scaling_;
  in.site = &site_;
  in.training = is_training();
  return in;
}

torch::Tensor MultiheadAttentionImpl::before_sublayer(const torch::Tensor& x, const AttentionCall& call) {
  if (!(chain_->uses() & AttentionEntry::kBefore)) return x;
  return chain_->before(x, {call.key_padding_mask, call.causal, call.state, call.cache_key, is_training()});
}

torch::Tensor MultiheadAttentionImpl::project_output(const torch::Tensor& context, const AttentionInputs& in) {
  torch::Tensor out = output(context);
  if (!(chain_->uses() & AttentionEntry::kOutput)) return out;
  torch::Tensor term = chain_->output(context, in);
  return term.defined() ? out + term : out;
}

torch::Tensor MultiheadAttentionImpl::project(const torch::Tensor& x, int64_t first, int64_t count) const {
  const int64_t d = options_.embed_dim;
  // Row slices of the fused weight are contiguous views: no copy.
  return linear(x, in_proj_weight.narrow(0, first * d, count * d),
                in_proj_bias.defined() ? in_proj_bias.narrow(0, first * d, count * d) : torch::Tensor());
}

torch::Tensor MultiheadAttentionImpl::split_heads(const torch::Tensor& x) const {
  return x.view({x.size(0), x.size(1), options_.num_heads, head_dim_}).transpose(1, 2);
}

namespace {

// [N*G, H, Tq, d] -> [N, H, G*Tq, d]: the G query rows of each key row side by side.
torch::Tensor stack_groups(const torch::Tensor& q, int64_t groups) {
  const int64_t n = q.size(0) / groups, heads = q.size(1), tq = q.size(2), dim = q.size(3);
  return q.reshape({n, groups, heads, tq, dim}).transpose(1, 2).reshape({n, heads, groups * tq, dim});
}

// The inverse of stack_groups.
torch::Tensor unstack_groups(const torch::Tensor& x, int64_t groups, int64_t tq) {
  const int64_t n = x.size(0), heads = x.size(1), dim = x.size(3);
  return x.view({n, heads, groups, tq, dim}).transpose(1, 2).reshape({n * groups, heads, tq, dim});
}

}  // namespace

torch::Tensor MultiheadAttentionImpl::forward(const torch::Tensor& query, const torch::Tensor& key,
                                              const torch::Tensor& value, const AttentionCall& call) {
  const int64_t batch = query.size(0), tq = query.size(1), d = options_.embed_dim;
  const bool self_attention = query.is_same(key) && key.is_same(value);
  const std::string k_name = call.cache_key + ".prev_key", v_name = call.cache_key + ".prev_value";
  const bool kv_cached = call.static_kv && call.state && call.state->has(k_name);

  torch::Tensor q, k, v;
  if (self_attention) {
    auto qkv = project(query, 0, 3).chunk(3, -1);
    q = qkv[0], k = qkv[1], v = qkv[2];
  } else {
    q = project(query, 0, 1);
    if (!kv_cached) {
      if (key.is_same(value)) {
        auto kv = project(key, 1, 2).chunk(2, -1);
        k = kv[0], v = kv[1];
      } else {
        k = project(key, 1, 1), v = project(value, 2, 1);
      }
    }
  }
  const unsigned uses = chain_->uses();
  if (uses & AttentionEntry::kScale) chain_->scale(q, k, v);
  // Absolute position of query 0 once the number of keys is known (self-attention: the
  // queries are the last Tq of the Tk positions).
  auto query_offset = [&](int64_t tk) { return self_attention ? tk - tq : std::max<int64_t>(0, call.query_offset); };
  // Scales and biases run inside the kernels; anything else needs the general path.
  const bool kernels = chain_->kernels_suffice();
  const bool fusable = !call.state && kernels && !(is_training() && options_.attention_dropout > 0) &&
                       q.scalar_type() == torch::kFloat && q.device().is_cpu() && fused_attention_available();
  if (fusable) {
    AttentionInputs inputs;
    if (uses & (AttentionEntry::kBias | AttentionEntry::kOutput))
      inputs = entry_inputs(q, k, k.size(1), query_offset(k.size(1)), call.key_padding_mask);
    torch::Tensor bias;
    if (uses & AttentionEntry::kBias) bias = chain_->bias(inputs);
    return project_output(
        fused_attention(q, k, v, call.key_padding_mask, call.causal, options_.num_heads, scaling_, bias), inputs);
  }
  const torch::Tensor q_projected = q;  // [B, Tq, D], what entries see
  if (kv_cached) {
    k = call.state->stored(k_name), v = call.state->stored(v_name);  // bf16 where the caches are compact
  } else {
    k = split_heads(k), v = split_heads(v);
    if (call.state && call.static_kv) {
      call.state->set(k_name, k, /*compact=*/true);
      call.state->set(v_name, v, /*compact=*/true);
      k = call.state->stored(k_name), v = call.state->stored(v_name);  // every step reads the same values
    } else if (call.state) {                                           // written in place into preallocated caches
      call.state->append(k_name, k, /*compact=*/true);
      call.state->append(v_name, v, /*compact=*/true);
    }
  }
  const bool growing = call.state && !call.static_kv;
  // One new position per row against the caches: the decoding kernel, which reads
  // the self-attention caches through the beams' history (no reordering copies) and
  // the beams' shared encoder keys once per sentence.
  const bool decoding_step = tq == 1 && kernels && !(uses & AttentionEntry::kNeedsKeys) &&
                             !(q.requires_grad() || k.requires_grad() || v.requires_grad()) &&
                             !(is_training() && options_.attention_dropout > 0) && q.scalar_type() == torch::kFloat &&
                             (k.scalar_type() == torch::kFloat || k.scalar_type() == torch::kBFloat16) &&
                             q.device().is_cpu() && k.device().is_cpu() &&
                             !(growing && call.key_padding_mask.defined());
  if (decoding_step) {
    const int64_t tk = growing ? call.state->length(k_name) : k.size(2);
    AttentionInputs inputs;
    if (uses & (AttentionEntry::kBias | AttentionEntry::kOutput))
      inputs = entry_inputs(q, {}, tk, query_offset(tk), call.key_padding_mask);
    torch::Tensor bias;
    if (uses & AttentionEntry::kBias) {
      bias = chain_->bias(inputs);
      if (bias.defined()) bias = bias.select(2, 0);  // [R or 1, H or 1, Tk]
    }
    torch::Tensor context;
    if (growing) {
      const auto keys = call.state->history(k_name), values = call.state->history(v_name);
      context = decoding_attention(q.select(1, 0), keys.positions, values.positions, {}, options_.num_heads, scaling_,
                                   keys.rows_at, bias);
    } else {
      context = decoding_attention(q.select(1, 0), k, v, call.key_padding_mask, options_.num_heads, scaling_, {}, bias);
    }
    return project_output(context.view({batch, 1, d}), inputs);
  }
  if (growing) {
    k = call.state->at(k_name), v = call.state->at(v_name);
  } else if (k.scalar_type() != q.scalar_type()) {  // compact encoder keys and values
    k = k.to(q.scalar_type()), v = v.to(q.scalar_type());
  }
  q = split_heads(q).mul(scaling_);  // fairseq scales q after its bias
  const int64_t tk = k.size(2);
  torch::Tensor key_padding_mask = call.key_padding_mask;
  // Keys/values with one row per sentence for `groups` consecutive query rows (the
  // beams of a sentence in incremental decoding): a full-scope attention stacks the
  // beams' queries so each sentence runs one product; other chains see copies.
  if (batch % k.size(0) != 0)
    throw Error("attention: " + std::to_string(batch) + " query rows for " + std::to_string(k.size(0)) + " key rows");
  int64_t groups = batch / k.size(0);
  if (groups > 1 && (call.causal || !chain_->empty())) {
    k = k.repeat_interleave(groups, 0), v = v.repeat_interleave(groups, 0);
    if (key_padding_mask.defined()) key_padding_mask = key_padding_mask.repeat_interleave(groups, 0);
    groups = 1;
  }
  if (groups > 1) q = stack_groups(q, groups);

  AttentionInputs inputs;
  torch::Tensor bias;
  if (!chain_->empty()) {
    inputs = entry_inputs(
        q_projected,
        (uses & AttentionEntry::kNeedsKeys) ? k.transpose(1, 2).reshape({k.size(0), tk, d}) : torch::Tensor(), tk,
        query_offset(tk), key_padding_mask);
    if (uses & AttentionEntry::kBias) bias = chain_->bias(inputs);
  }
  const double dropout = is_training() ? options_.attention_dropout : 0.0;
  torch::Tensor heads;
  if (AttentionEntry* computing = chain_->computing_entry()) {
    const ScopeContext context{self_attention ? tk - tq : 0, call.causal, self_attention};
    heads = computing->attend({q, k, v, key_padding_mask, dropout}, context, bias);
  }
  if (!heads.defined()) {
    torch::Tensor scores = torch::matmul(q, k.transpose(-2, -1));  // [B, H, Tq, Tk]
    const double neg_inf = -std::numeric_limits<double>::infinity();
    if (key_padding_mask.defined()) scores.masked_fill_(key_padding_mask.view({k.size(0), 1, 1, tk}), neg_inf);
    if (call.causal && tq > 1) {
      // Query i sits at absolute position (tk - tq + i) and sees keys up to it.
      auto future = torch::ones({tq, tk}, torch::dtype(torch::kBool).device(scores.device())).triu_(tk - tq + 1);
      scores.masked_fill_(future, neg_inf);
    }
    if (bias.defined()) scores = scores + bias_as(bias, scores.scalar_type());

    torch::Tensor probs = scores.scalar_type() == torch::kFloat
                              ? torch::softmax(scores, -1)
                              : torch::softmax(scores, -1, torch::kFloat).to(scores.scalar_type());
    if (uses & AttentionEntry::kProbabilities) probs = chain_->probabilities(probs, inputs);
    if (dropout > 0) probs = torch::dropout(probs, dropout, true);
    heads = torch::matmul(probs, v);  // [B, H, Tq, d]
    if (uses & AttentionEntry::kValues) {
      torch::Tensor term = chain_->values(probs, inputs);
      if (term.defined()) heads = heads + term;
    }
  }
  if (groups > 1) heads = unstack_groups(heads, groups, tq);

  return project_output(heads.transpose(1, 2).reshape({batch, tq, d}), inputs);
}

}  // namespace csan::nn
