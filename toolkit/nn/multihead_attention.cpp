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
  return in_proj(x, in_proj_weight,
                 in_proj_bias.defined() ? in_proj_bias.narrow(0, first * d, count * d) : torch::Tensor(), first * d,
                 count * d);
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
  Step step = project_inputs(query, key, value, call);
  if (!call.attention_out && fused_kernel_applies(step, call)) return fused_kernel(step, call);
  use_caches(step, call);
  if (!call.attention_out && decoding_kernel_applies(step, call)) return decoding_kernel(step, call);
  return general_path(step, call);
}

MultiheadAttentionImpl::Step MultiheadAttentionImpl::project_inputs(const torch::Tensor& query,
                                                                    const torch::Tensor& key,
                                                                    const torch::Tensor& value,
                                                                    const AttentionCall& call) {
  Step step;
  step.self_attention = query.is_same(key) && key.is_same(value);
  step.k_name = call.cache_key + ".prev_key";
  step.v_name = call.cache_key + ".prev_value";
  step.kv_cached = call.static_kv && call.state && call.state->has(step.k_name);
  if (step.self_attention) {
    auto qkv = project(query, 0, 3).chunk(3, -1);
    step.q = qkv[0], step.k = qkv[1], step.v = qkv[2];
  } else {
    step.q = project(query, 0, 1);
    if (!step.kv_cached) {
      if (key.is_same(value)) {
        auto kv = project(key, 1, 2).chunk(2, -1);
        step.k = kv[0], step.v = kv[1];
      } else {
        step.k = project(key, 1, 1), step.v = project(value, 2, 1);
      }
    }
  }
  if (chain_->uses() & AttentionEntry::kScale) chain_->scale(step.q, step.k, step.v);
  step.q_projected = step.q;
  return step;
}

int64_t MultiheadAttentionImpl::query_offset(const Step& step, const AttentionCall& call, int64_t tk) const {
  // Self-attention's queries are the last Tq of the Tk positions.
  return step.self_attention ? tk - step.q_projected.size(1) : std::max<int64_t>(0, call.query_offset);
}

bool MultiheadAttentionImpl::fused_kernel_applies(const Step& step, const AttentionCall& call) const {
  // Scales and biases run inside the kernels; anything else needs the general path.
  return !call.state && chain_->kernels_suffice() && !(is_training() && options_.attention_dropout > 0) &&
         step.q.scalar_type() == torch::kFloat && step.q.device().is_cpu() && fused_attention_available();
}

torch::Tensor MultiheadAttentionImpl::fused_kernel(const Step& step, const AttentionCall& call) {
  const unsigned uses = chain_->uses();
  const int64_t tk = step.k.size(1);
  AttentionInputs inputs;
  if (uses & (AttentionEntry::kBias | AttentionEntry::kOutput))
    inputs = entry_inputs(step.q, step.k, tk, query_offset(step, call, tk), call.key_padding_mask);
  torch::Tensor bias;
  if (uses & AttentionEntry::kBias) bias = chain_->bias(inputs);
  return project_output(
      fused_attention(step.q, step.k, step.v, call.key_padding_mask, call.causal, options_.num_heads, scaling_, bias),
      inputs);
}

void MultiheadAttentionImpl::use_caches(Step& step, const AttentionCall& call) {
  IncrementalState* state = call.state;
  if (step.kv_cached) {
    step.k = state->stored(step.k_name), step.v = state->stored(step.v_name);  // bf16 where the caches are compact
    return;
  }
  step.k = split_heads(step.k), step.v = split_heads(step.v);
  if (state && call.static_kv) {
    state->set(step.k_name, step.k, /*compact=*/true);
    state->set(step.v_name, step.v, /*compact=*/true);
    // Every step reads the same values.
    step.k = state->stored(step.k_name), step.v = state->stored(step.v_name);
  } else if (state) {  // written in place into preallocated caches
    state->append(step.k_name, step.k, /*compact=*/true);
    state->append(step.v_name, step.v, /*compact=*/true);
  }
}

bool MultiheadAttentionImpl::decoding_kernel_applies(const Step& step, const AttentionCall& call) const {
  const torch::Tensor &q = step.q, &k = step.k, &v = step.v;
  const bool growing = call.state && !call.static_kv;
  // One new position per row against the caches: the decoding kernel, which reads the
  // self-attention caches through the beams' history (no reordering copies) and the beams'
  // shared encoder keys once per sentence.
  return q.size(1) == 1 && chain_->kernels_suffice() && !(chain_->uses() & AttentionEntry::kNeedsKeys) &&
         !(q.requires_grad() || k.requires_grad() || v.requires_grad()) &&
         !(is_training() && options_.attention_dropout > 0) && q.scalar_type() == torch::kFloat &&
         (k.scalar_type() == torch::kFloat || k.scalar_type() == torch::kBFloat16) && q.device().is_cpu() &&
         k.device().is_cpu() && !(growing && call.key_padding_mask.defined());
}

torch::Tensor MultiheadAttentionImpl::decoding_kernel(const Step& step, const AttentionCall& call) {
  const unsigned uses = chain_->uses();
  const bool growing = call.state && !call.static_kv;
  const int64_t tk = growing ? call.state->length(step.k_name) : step.k.size(2);
  AttentionInputs inputs;
  if (uses & (AttentionEntry::kBias | AttentionEntry::kOutput))
    inputs = entry_inputs(step.q, {}, tk, query_offset(step, call, tk), call.key_padding_mask);
  torch::Tensor bias;
  if (uses & AttentionEntry::kBias) {
    bias = chain_->bias(inputs);
    if (bias.defined()) bias = bias.select(2, 0);  // [R or 1, H or 1, Tk]
  }
  const torch::Tensor q = step.q.select(1, 0);
  torch::Tensor context;
  if (growing) {
    const auto keys = call.state->history(step.k_name), values = call.state->history(step.v_name);
    context =
        decoding_attention(q, keys.positions, values.positions, {}, options_.num_heads, scaling_, keys.rows_at, bias);
  } else {
    context = decoding_attention(q, step.k, step.v, call.key_padding_mask, options_.num_heads, scaling_, {}, bias);
  }
  return project_output(context.view({step.q.size(0), 1, options_.embed_dim}), inputs);
}

torch::Tensor MultiheadAttentionImpl::general_path(const Step& step, const AttentionCall& call) {
  const int64_t batch = step.q.size(0), tq = step.q.size(1), d = options_.embed_dim;
  const unsigned uses = chain_->uses();
  torch::Tensor q = step.q, k = step.k, v = step.v;
  if (call.state && !call.static_kv) {
    k = call.state->at(step.k_name), v = call.state->at(step.v_name);
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
  if (groups > 1 && (call.causal || !chain_->empty() || call.attention_out)) {
    k = k.repeat_interleave(groups, 0), v = v.repeat_interleave(groups, 0);
    if (key_padding_mask.defined()) key_padding_mask = key_padding_mask.repeat_interleave(groups, 0);
    groups = 1;
  }
  if (groups > 1) q = stack_groups(q, groups);

  AttentionInputs inputs;
  torch::Tensor bias;
  if (!chain_->empty()) {
    inputs = entry_inputs(
        step.q_projected,
        (uses & AttentionEntry::kNeedsKeys) ? k.transpose(1, 2).reshape({k.size(0), tk, d}) : torch::Tensor(), tk,
        query_offset(step, call, tk), key_padding_mask);
    if (uses & AttentionEntry::kBias) bias = chain_->bias(inputs);
  }
  const double dropout = is_training() ? options_.attention_dropout : 0.0;
  torch::Tensor heads;
  if (AttentionEntry* computing = chain_->computing_entry()) {
    if (call.attention_out)
      throw Error("attention: this attention's entries compute its output themselves; its weights cannot be read");
    const ScopeContext context{step.self_attention ? tk - tq : 0, call.causal, step.self_attention};
    heads = computing->attend({q, k, v, key_padding_mask, dropout}, context, bias);
  }
  if (!heads.defined()) heads = scaled_dot_product(q, k, v, key_padding_mask, call.causal, bias, dropout, inputs, call.attention_out);
  if (groups > 1) heads = unstack_groups(heads, groups, tq);

  return project_output(heads.transpose(1, 2).reshape({batch, tq, d}), inputs);
}

torch::Tensor MultiheadAttentionImpl::scaled_dot_product(const torch::Tensor& q, const torch::Tensor& k,
                                                         const torch::Tensor& v, const torch::Tensor& key_padding_mask,
                                                         bool causal, const torch::Tensor& bias, double dropout,
                                                         const AttentionInputs& inputs, torch::Tensor* attention_out) {
  const unsigned uses = chain_->uses();
  const int64_t tq = q.size(2), tk = k.size(2);
  torch::Tensor scores = torch::matmul(q, k.transpose(-2, -1));  // [B, H, Tq, Tk]
  const double neg_inf = -std::numeric_limits<double>::infinity();
  if (key_padding_mask.defined()) scores.masked_fill_(key_padding_mask.view({k.size(0), 1, 1, tk}), neg_inf);
  if (causal && tq > 1) {
    // Query i sits at absolute position (tk - tq + i) and sees keys up to it.
    auto future = torch::ones({tq, tk}, torch::dtype(torch::kBool).device(scores.device())).triu_(tk - tq + 1);
    scores.masked_fill_(future, neg_inf);
  }
  if (bias.defined()) scores = scores + bias_as(bias, scores.scalar_type());

  torch::Tensor probs = scores.scalar_type() == torch::kFloat
                            ? torch::softmax(scores, -1)
                            : torch::softmax(scores, -1, torch::kFloat).to(scores.scalar_type());
  if (uses & AttentionEntry::kProbabilities) probs = chain_->probabilities(probs, inputs);
  if (attention_out) *attention_out = probs.mean(1).to(torch::kFloat);
  if (dropout > 0) probs = torch::dropout(probs, dropout, true);
  torch::Tensor heads = torch::matmul(probs, v);  // [B, H, Tq, d]
  if (uses & AttentionEntry::kValues) {
    torch::Tensor term = chain_->values(probs, inputs);
    if (term.defined()) heads = heads + term;
  }
  return heads;
}

}  // namespace csan::nn
