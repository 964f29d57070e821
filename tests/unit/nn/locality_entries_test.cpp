// The seven locality baselines of CSAN's Table 1 (toolkit/nn/<method>_entry.h), each in
// MultiheadAttention against a reference written from its equations on random inputs,
// forward and gradient (the module's, the entry's and the input's), at the sites the
// method allows: encoder self-attention with padding, causal decoder self-attention,
// cross-attention. BLOCK's reference is the first author's computation (attention
// inside reshaped blocks, the output projection over [r_h; e_h] per head), so it also
// checks that a block mask plus an output term equals it; CNNs' reference convolves tap
// by tap. Bias-only methods keep the fused kernel; CSAN's windows take the others'
// biases in one chain; entries that need the general path refuse to follow CSAN.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <memory>
#include <string>

#include "tests/support/max_difference.h"
#include "tests/support/window_mask.h"
#include "toolkit/core/error.h"
#include "toolkit/nn/bi_direct_entry.h"
#include "toolkit/nn/block_entry.h"
#include "toolkit/nn/cnns_entry.h"
#include "toolkit/nn/csan_entry.h"
#include "toolkit/nn/local_hard_entry.h"
#include "toolkit/nn/local_soft_entry.h"
#include "toolkit/nn/multihead_attention.h"
#include "toolkit/nn/neighbor_entry.h"
#include "toolkit/nn/rel_pos_entry.h"

namespace {

using namespace csan;
using namespace csan::nn;
using csan::testing::max_difference;
using csan::testing::WindowMask;
namespace F = torch::nn::functional;

constexpr int64_t kDim = 16, kHeads = 4, kHeadDim = kDim / kHeads;
constexpr double kHidden = -1e9;  // the entries' hidden score

MultiheadAttention make_locality_attention(uint64_t seed = 3) {
  torch::manual_seed(seed);
  return MultiheadAttention(MultiheadAttentionOptions{kDim, kHeads, 0.0, true});
}

AttentionSite site_of(bool causal, bool self) {
  AttentionSite s;
  s.role = causal ? "decoder.self" : self ? "encoder.self" : "decoder.cross";
  s.num_heads = kHeads;
  s.embed_dim = kDim;
  s.causal = causal;
  s.self_attention = self;
  return s;
}

torch::Tensor heads(const torch::Tensor& x) { return x.view({x.size(0), x.size(1), kHeads, kHeadDim}).transpose(1, 2); }

// What a method changes, computed from its equations on the projections.
struct Reference {
  torch::Tensor bias;                                                // [B|1, H, Tq, Tk]
  std::function<torch::Tensor(const torch::Tensor&)> probabilities;  // probs -> probs
  std::function<torch::Tensor(const torch::Tensor&)> values;         // probs -> [B, H, Tq, d]
};

struct Call {
  torch::Tensor q, k;  // projected, [B, Tq, D] and [B, Tk, D]
  int64_t offset = 0;  // absolute position of query 0
  torch::Tensor mask;  // [B, Tk] or undefined
  bool causal = false;
};

using Method = std::function<Reference(const Call&)>;

// scores = q k^T / sqrt(d) + masks + bias -> softmax -> transform -> probs V + values -> out_proj.
torch::Tensor reference_attention(MultiheadAttention& m, const Method& method, const torch::Tensor& query,
                                  const torch::Tensor& key, const torch::Tensor& mask, bool causal, int64_t offset) {
  auto W = m->in_proj_weight, b = m->in_proj_bias;
  auto q = F::linear(query, W.narrow(0, 0, kDim), b.narrow(0, 0, kDim));
  auto k = F::linear(key, W.narrow(0, kDim, kDim), b.narrow(0, kDim, kDim));
  auto v = F::linear(key, W.narrow(0, 2 * kDim, kDim), b.narrow(0, 2 * kDim, kDim));
  const int64_t tq = q.size(1), tk = k.size(1);
  const Reference r = method({q, k, offset, mask, causal});
  auto scores = torch::matmul(heads(q), heads(k).transpose(-2, -1)) / std::sqrt(double(kHeadDim));
  if (mask.defined()) scores = scores.masked_fill(mask.view({k.size(0), 1, 1, tk}), -INFINITY);
  if (causal) scores = scores.masked_fill(torch::ones({tq, tk}, torch::kBool).triu(tk - tq + 1), -INFINITY);
  if (r.bias.defined()) scores = scores + r.bias;
  auto probs = torch::softmax(scores, -1);
  if (r.probabilities) probs = r.probabilities(probs);
  auto context = torch::matmul(probs, heads(v));
  if (r.values) context = context + r.values(probs);
  return m->out_proj(context.transpose(1, 2).reshape({query.size(0), tq, kDim}));
}

// Keys each query sees, [B, 1, Tq, 1], counted one by one.
torch::Tensor visible_keys(const Call& c) {
  const int64_t batch = c.q.size(0), tq = c.q.size(1), tk = c.k.size(1);
  auto count = torch::zeros({batch, 1, tq, 1});
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < tq; ++i) {
      int64_t n = 0;
      for (int64_t j = 0; j < tk; ++j)
        if (!(c.mask.defined() && c.mask[b][j].item<bool>()) && !(c.causal && j > c.offset + i)) ++n;
      count[b][0][i][0] = double(n);
    }
  return count;
}

torch::Tensor key_positions(int64_t tk) { return torch::arange(tk, torch::kFloat).view({1, 1, 1, -1}); }

// σ(W_2 tanh(W_1 q + b_1) + b_2) per query, [B, outputs, Tq, 1].
torch::Tensor predicted(PositionPredictor& p, const torch::Tensor& q) {
  auto hidden = torch::tanh(F::linear(q, p->hidden->weight, p->hidden->bias));
  return torch::sigmoid(F::linear(hidden, p->out->weight, p->out->bias)).transpose(1, 2).unsqueeze(-1);
}

torch::Tensor with_global_heads(const torch::Tensor& local, int64_t global, double fill) {
  if (global == 0) return local;
  return torch::cat({torch::full({local.size(0), global, local.size(2), local.size(3)}, fill), local}, 1);
}

// ---- the methods' equations ------------------------------------------------------------

Method bi_direct_reference(int64_t global_heads) {
  return [global_heads](const Call& c) {
    const int64_t tq = c.q.size(1), tk = c.k.size(1);
    auto bias = torch::zeros({1, kHeads, tq, tk});
    for (int64_t h = global_heads; h < kHeads; ++h) {
      const bool forward = (h - global_heads) % 2 == 0;
      for (int64_t i = 0; i < tq; ++i)
        for (int64_t j = 0; j < tk; ++j)
          if (forward ? j > c.offset + i : j < c.offset + i) bias[0][h][i][j] = kHidden;
    }
    return Reference{bias, {}, {}};
  };
}

Method rel_pos_reference(RelPosEntry& e, int64_t clip) {
  return [&e, clip](const Call& c) {
    const int64_t tq = c.q.size(1), tk = c.k.size(1);
    std::vector<int64_t> row;
    for (int64_t i = 0; i < tq; ++i)
      for (int64_t j = 0; j < tk; ++j)
        row.push_back(std::min(std::max(j - (c.offset + i) + clip, int64_t{0}), 2 * clip - 1));
    auto a = e.table.index_select(0, torch::tensor(row)).view({tq, tk, 2 * kHeadDim});
    auto a_key = a.narrow(2, 0, kHeadDim), a_value = a.narrow(2, kHeadDim, kHeadDim);
    Reference r;
    r.bias = torch::einsum("bhid,ijd->bhij", {heads(c.q), a_key}) / std::sqrt(double(kHeadDim));  // eq. 5
    r.values = [a_value](const torch::Tensor& probs) { return torch::einsum("bhij,ijd->bhid", {probs, a_value}); };
    return r;
  };
}

Method neighbor_reference(NeighborEntry& e) {
  return [&e](const Call& c) {
    const int64_t tq = c.q.size(1), tk = c.k.size(1);
    auto i = (torch::arange(tq, torch::kFloat) + double(c.offset)).view({1, 1, -1, 1});
    auto sigma = e.std_root.square().view({1, -1, 1, 1});
    return Reference{-(i - key_positions(tk)).square() / (2 * sigma.square()), {}, {}};
  };
}

Method local_soft_reference(LocalSoftEntry& e, int64_t global_heads) {
  return [&e, global_heads](const Call& c) {
    const int64_t local = kHeads - global_heads;
    auto p = predicted(e.predictor, c.q);
    auto seen = visible_keys(c);
    auto centre = p.narrow(1, 0, local) * (seen - 1), window = p.narrow(1, local, local) * seen + 0.1;
    auto gaussian = -2 * ((centre - key_positions(c.k.size(1))) / window).square();
    return Reference{with_global_heads(gaussian, global_heads, 0.0), {}, {}};
  };
}

Method local_hard_reference(LocalHardEntry& e, int64_t global_heads, int64_t window) {
  return [&e, global_heads, window](const Call& c) {
    auto aligned = predicted(e.predictor, c.q) * (visible_keys(c) - 1);  // p_i, eq. 9
    auto offset = key_positions(c.k.size(1)) - aligned;
    Reference r;
    r.bias = with_global_heads(torch::where(offset.abs() > double(window), torch::full({}, kHidden), torch::zeros({})),
                               global_heads, 0.0);
    const double sigma = window / 2.0;
    auto gaussian = with_global_heads(torch::exp(-offset.square() / (2 * sigma * sigma)), global_heads, 1.0);
    r.probabilities = [gaussian](const torch::Tensor& probs) { return probs * gaussian; };  // eq. 10
    return r;
  };
}

// ---- forward and gradient --------------------------------------------------------------

// Loss weights that leave out padding queries (what they compute is nobody's concern).
torch::Tensor query_weights(const torch::Tensor& out, const torch::Tensor& padded_queries) {
  auto w = torch::linspace(-1, 1, out.numel()).view(out.sizes());
  if (padded_queries.defined()) w = w.masked_fill(padded_queries.unsqueeze(-1), 0.0);
  return w;
}

std::vector<torch::Tensor> parameter_and_input_gradients(torch::nn::Module& module, torch::Tensor& x,
                                                         const torch::Tensor& weights,
                                                         const std::function<torch::Tensor()>& forward) {
  for (auto& p : module.parameters()) p.mutable_grad() = torch::Tensor();
  x.mutable_grad() = torch::Tensor();
  (forward() * weights).sum().backward();
  std::vector<torch::Tensor> grads;
  for (auto& p : module.parameters()) grads.push_back(p.grad().defined() ? p.grad().clone() : torch::zeros_like(p));
  grads.push_back(x.grad().clone());
  return grads;
}

struct Site {
  bool causal, self;
  std::string name() const { return causal ? "decoder self" : self ? "encoder self" : "cross"; }
};

// The entry in a module against the method's reference at one kind of site.
void expect_equals_reference(const std::string& method, const std::shared_ptr<AttentionEntry>& entry,
                             const Method& reference, Site s) {
  auto mha = make_locality_attention();
  mha->add_entry(method, entry);
  mha->set_site(site_of(s.causal, s.self));
  mha->train();  // no dropout configured: training mode only keeps the graph
  torch::manual_seed(5);
  auto x = torch::randn({3, 7, kDim}).requires_grad_(true);
  auto memory = torch::randn({3, 9, kDim});
  const torch::Tensor key = s.self ? x : memory;
  torch::Tensor mask;
  if (!s.causal) {
    mask = torch::zeros({3, key.size(1)}, torch::kBool);
    mask[1].narrow(0, key.size(1) - 3, 3).fill_(true);
  }
  AttentionCall call;
  call.causal = s.causal;
  call.key_padding_mask = mask;
  call.query_offset = s.self ? -1 : 2;
  const int64_t offset = s.self ? 0 : 2;
  const torch::Tensor padded_queries = s.self ? mask : torch::Tensor();
  const std::string where = method + " " + s.name();

  auto module_out = mha(x, key, key, call);
  auto reference_out = reference_attention(mha, reference, x, key, mask, s.causal, offset);
  const auto weights = query_weights(module_out, padded_queries);
  EXPECT_LT(((module_out - reference_out) * weights.ne(0)).abs().max().item<double>(), 1e-5) << where;
  auto g_module = parameter_and_input_gradients(*mha, x, weights,
                                                [&] { return mha(x, s.self ? x : memory, s.self ? x : memory, call); });
  auto g_reference = parameter_and_input_gradients(*mha, x, weights, [&] {
    return reference_attention(mha, reference, x, s.self ? x : memory, mask, s.causal, offset);
  });
  EXPECT_LT(max_difference(g_module, g_reference), 1e-4) << where;
  for (const auto& p : entry->parameters())
    EXPECT_TRUE(p.grad().defined() && p.grad().abs().sum().item<double>() > 0)
        << where << ": an entry parameter learns";
}

TEST(LocalityEntries, BiDirectEqualsItsMasks) {
  for (int64_t global : {0, 2}) {
    expect_equals_reference("bi_direct", std::make_shared<BiDirectEntry>(kHeads, global), bi_direct_reference(global),
                            {false, true});
  }
}

TEST(LocalityEntries, RelPosEqualsShawEtAlWithTheFirstAuthorsClipping) {
  for (Site s : {Site{false, true}, Site{true, true}, Site{false, false}}) {
    for (int64_t clip : {2, 16}) {  // clipped often, and never within 7 positions
      auto entry = std::make_shared<RelPosEntry>(kHeadDim, clip);
      expect_equals_reference("rel_pos", entry, rel_pos_reference(*entry, clip), s);
    }
  }
}

TEST(LocalityEntries, NeighborEqualsTheDiagonalGaussian) {
  for (Site s : {Site{false, true}, Site{true, true}}) {
    auto entry = std::make_shared<NeighborEntry>(kHeads, 2.0);
    {
      torch::NoGradGuard no_grad;
      entry->std_root.add_(torch::randn({kHeads}) * 0.2);  // a width of its own per head
    }
    expect_equals_reference("neighbor", entry, neighbor_reference(*entry), s);
  }
}

TEST(LocalityEntries, LocalSoftEqualsThePredictedGaussian) {
  for (Site s : {Site{false, true}, Site{true, true}, Site{false, false}}) {
    for (int64_t global : {0, 1}) {
      torch::manual_seed(9);
      auto entry = std::make_shared<LocalSoftEntry>(kDim, kHeads, global);
      expect_equals_reference("local_soft", entry, local_soft_reference(*entry, global), s);
    }
  }
}

TEST(LocalityEntries, LocalHardEqualsLocalPAttention) {
  for (Site s : {Site{false, true}, Site{true, true}, Site{false, false}}) {
    for (int64_t window : {1, 3}) {
      torch::manual_seed(9);
      auto entry = std::make_shared<LocalHardEntry>(kDim, kHeads, 2, window);
      expect_equals_reference("local_hard", entry, local_hard_reference(*entry, 2, window), s);
    }
  }
}

// ---- BLOCK ------------------------------------------------------------------------------

// The first author's layers/attention_block.py, with padding kept out of the summaries.
torch::Tensor block_reference(MultiheadAttention& m, BlockEntry& e, const torch::Tensor& x, const torch::Tensor& mask,
                              int64_t n) {
  const int64_t batch = x.size(0), length = x.size(1), blocks = (length + n - 1) / n, padded = blocks * n;
  const double scale = 1.0 / std::sqrt(double(kHeadDim));
  auto W = m->in_proj_weight, b = m->in_proj_bias;
  auto project = [&](int64_t which) {
    return torch::constant_pad_nd(F::linear(x, W.narrow(0, which * kDim, kDim), b.narrow(0, which * kDim, kDim)),
                                  {0, 0, 0, padded - length});
  };
  auto hidden = torch::cat({mask.defined() ? mask : torch::zeros({batch, length}, torch::kBool),
                            torch::ones({batch, padded - length}, torch::kBool)},
                           1);
  // [B, P, D] -> [B, H, M, n, d]
  auto in_blocks = [&](const torch::Tensor& t) {
    return t.view({batch, blocks, n, kHeads, kHeadDim}).permute({0, 3, 1, 2, 4});
  };
  auto q = in_blocks(project(0)), k = in_blocks(project(1)), v = in_blocks(project(2));
  auto scores = torch::matmul(q, k.transpose(-2, -1)) * scale;
  scores = scores.masked_fill(hidden.view({batch, 1, blocks, 1, n}), kHidden);
  auto r = torch::matmul(torch::softmax(scores, -1), v);                    // intra-block, [B, H, M, n, d]
  auto r_flat = r.permute({0, 2, 3, 1, 4}).reshape({batch, padded, kDim});  // heads combined
  auto logits = F::linear(torch::sigmoid(F::linear(r_flat, e.summary_gate->weight, e.summary_gate->bias)),
                          e.summary_logits->weight, e.summary_logits->bias)  // [B, P, H]
                    .view({batch, blocks, n, kHeads})
                    .permute({0, 3, 1, 2})
                    .masked_fill(hidden.view({batch, 1, blocks, n}), kHidden);
  auto s = (torch::softmax(logits, -1).unsqueeze(-1) * r).sum(3);  // [B, H, M, d]
  auto s_flat = s.permute({0, 2, 1, 3}).reshape({batch, blocks, kDim});
  auto queries = F::linear(s_flat, e.block_query->weight, e.block_query->bias)
                     .view({batch, blocks, kHeads, kHeadDim})
                     .permute({0, 2, 1, 3}) *
                 scale;
  auto empty = hidden.view({batch, blocks, n}).all(2).view({batch, 1, 1, blocks});
  auto o =
      torch::matmul(torch::softmax(torch::matmul(queries, s.transpose(-2, -1)).masked_fill(empty, kHidden), -1), s);
  auto o_flat = o.permute({0, 2, 1, 3}).reshape({batch, blocks, kDim});
  auto gate = torch::sigmoid(F::linear(torch::cat({s_flat, o_flat}, -1), e.fusion_gate->weight, e.fusion_gate->bias));
  auto e_flat = gate * o_flat + (1 - gate) * s_flat;
  // x = [r_h; e_h] per head -> W_O, which the module splits into out_proj (r) and merge (e).
  auto e_at = e_flat.view({batch, blocks, 1, kHeads, kHeadDim}).expand({batch, blocks, n, kHeads, kHeadDim});
  auto r_at = r.permute({0, 2, 3, 1, 4});
  auto joined = torch::cat({r_at, e_at}, -1).reshape({batch, padded, 2 * kDim});
  std::vector<torch::Tensor> columns;
  for (int64_t h = 0; h < kHeads; ++h) {
    columns.push_back(m->out_proj->weight.narrow(1, h * kHeadDim, kHeadDim));
    columns.push_back(e.merge->weight.narrow(1, h * kHeadDim, kHeadDim));
  }
  return F::linear(joined, torch::cat(columns, 1), m->out_proj->bias).narrow(1, 0, length);
}

TEST(LocalityEntries, BlockEqualsTheFirstAuthorsBlockAttention) {
  for (int64_t n : {1, 3, 4, 7}) {  // one position per block, a partial last block, one block
    torch::manual_seed(2);
    auto entry = std::make_shared<BlockEntry>(kDim, kHeads, n, 0.0);
    auto mha = make_locality_attention();
    mha->add_entry("block", entry);
    mha->train();
    torch::manual_seed(5);
    auto x = torch::randn({3, 7, kDim}).requires_grad_(true);
    auto mask = torch::zeros({3, 7}, torch::kBool);
    mask[1].narrow(0, 2, 5).fill_(true);  // with n = 1..3 whole blocks of padding
    mask[2].narrow(0, 6, 1).fill_(true);
    AttentionCall call;
    call.key_padding_mask = mask;
    const std::string where = "block size " + std::to_string(n);
    auto out = mha(x, x, x, call);
    const auto weights = query_weights(out, mask);
    EXPECT_LT(((out - block_reference(mha, *entry, x, mask, n)) * weights.ne(0)).abs().max().item<double>(), 1e-5)
        << where;
    auto g_module = parameter_and_input_gradients(*mha, x, weights, [&] { return mha(x, x, x, call); });
    auto g_reference =
        parameter_and_input_gradients(*mha, x, weights, [&] { return block_reference(mha, *entry, x, mask, n); });
    EXPECT_LT(max_difference(g_module, g_reference), 1e-4) << where;
    // A sentence's result does not depend on the padding its batch gives it.
    torch::NoGradGuard no_grad;
    mha->eval();
    auto alone =
        mha(x.narrow(0, 1, 1).narrow(1, 0, 2), x.narrow(0, 1, 1).narrow(1, 0, 2), x.narrow(0, 1, 1).narrow(1, 0, 2));
    EXPECT_LT((alone - mha(x, x, x, call).narrow(0, 1, 1).narrow(1, 0, 2)).abs().max().item<double>(), 1e-5) << where;
  }
}

// ---- CNNs -------------------------------------------------------------------------------

// Post-norm sublayers x = LN(x + relu(W_p depthwise(x) + b_p)), the depthwise kernel tap by tap.
torch::Tensor cnns_reference(CnnsEntry& e, torch::Tensor x, const torch::Tensor& mask, bool causal, int64_t k) {
  const int64_t length = x.size(1), left = causal ? k - 1 : (k - 1) / 2;
  for (const auto& module : *e.convs) {
    auto conv = module->as<SeparableConv>();
    auto input = mask.defined() ? x.masked_fill(mask.unsqueeze(-1), 0.0) : x;
    auto mixed = torch::zeros_like(x);
    for (int64_t tap = 0; tap < k; ++tap) {
      const int64_t shift = tap - left;  // position t reads t + shift
      auto shifted = torch::zeros_like(x);
      for (int64_t t = 0; t < length; ++t)
        if (t + shift >= 0 && t + shift < length) shifted.select(1, t).copy_(input.select(1, t + shift));
      mixed = mixed + shifted * conv->depthwise.select(1, 0).select(1, tap);
    }
    auto y = torch::relu(F::linear(mixed, conv->pointwise->weight, conv->pointwise->bias));
    x = conv->norm(x + y);
  }
  return x;
}

TEST(LocalityEntries, CnnsEqualDepthwiseSeparableConvolutionsTapByTap) {
  for (const bool causal : {false, true}) {
    for (int64_t k : {1, 3, 5}) {
      torch::manual_seed(4);
      auto entry = std::make_shared<CnnsEntry>(kDim, k, 2, /*normalize_before=*/false, /*dropout=*/0.0);
      auto mha = make_locality_attention();
      mha->add_entry("cnns", entry);
      EXPECT_TRUE(mha->chain().kernels_suffice()) << "the attention itself is unchanged";
      mha->train();
      torch::manual_seed(5);
      auto x = torch::randn({3, 7, kDim}).requires_grad_(true);
      torch::Tensor mask;
      if (!causal) {
        mask = torch::zeros({3, 7}, torch::kBool);
        mask[1].narrow(0, 4, 3).fill_(true);
      }
      AttentionCall call;
      call.causal = causal;
      call.key_padding_mask = mask;
      const std::string where = std::string(causal ? "causal" : "centred") + " kernel " + std::to_string(k);
      auto out = mha->before_sublayer(x, call);
      const auto weights = query_weights(out, mask);
      EXPECT_LT(((out - cnns_reference(*entry, x, mask, causal, k)) * weights.ne(0)).abs().max().item<double>(), 1e-5)
          << where;
      auto g_module = parameter_and_input_gradients(*mha, x, weights, [&] { return mha->before_sublayer(x, call); });
      auto g_reference =
          parameter_and_input_gradients(*mha, x, weights, [&] { return cnns_reference(*entry, x, mask, causal, k); });
      EXPECT_LT(max_difference(g_module, g_reference), 1e-4) << where;
    }
  }
}

// ---- kernels and composition ------------------------------------------------------------

class IdentityProbabilities : public AttentionEntry {
 public:
  unsigned uses() const override { return kProbabilities; }
};

// Bias-only methods (and BLOCK, a bias plus an output term) run in the fused training
// kernel: the same output and gradients as the general path.
TEST(LocalityEntries, BiasMethodsKeepTheFusedKernel) {
  torch::manual_seed(6);
  const std::vector<std::pair<std::string, std::shared_ptr<AttentionEntry>>> methods = {
      {"bi_direct", std::make_shared<BiDirectEntry>(kHeads, 0)},
      {"neighbor", std::make_shared<NeighborEntry>(kHeads, 1.5)},
      {"local_soft", std::make_shared<LocalSoftEntry>(kDim, kHeads, 0)},
      {"block", std::make_shared<BlockEntry>(kDim, kHeads, 3, 0.0)}};
  for (const auto& [name, entry] : methods) {
    auto fast = make_locality_attention(), general = make_locality_attention();
    fast->add_entry(name, entry);
    general->add_entry(name, entry);
    general->add_entry("identity", std::make_shared<IdentityProbabilities>());
    EXPECT_TRUE(fast->chain().kernels_suffice()) << name;
    fast->train(), general->train();
    torch::manual_seed(8);
    auto x = torch::randn({4, 10, kDim}).requires_grad_(true);
    auto mask = torch::zeros({4, 10}, torch::kBool);
    mask[2].narrow(0, 6, 4).fill_(true);
    AttentionCall call;
    call.key_padding_mask = mask;
    auto out = fast(x, x, x, call);
    const auto weights = query_weights(out, mask);
    EXPECT_LT(((out - general(x, x, x, call)) * weights.ne(0)).abs().max().item<double>(), 1e-5) << name;
    auto g_fast = parameter_and_input_gradients(*fast, x, weights, [&] { return fast(x, x, x, call); });
    auto g_general = parameter_and_input_gradients(*general, x, weights, [&] { return general(x, x, x, call); });
    EXPECT_LT(max_difference(g_fast, g_general), 1e-4) << name;
  }
}

// CSAN computes its window itself and adds the other entries' biases (BLOCK also adds
// its output term): [csan 1-D window 5, method] equals the method with the window as a
// mask on the general path, and a 2-D area of 11 positions narrowed by a one-position
// mask equals the 2-D area of 3 positions, each with the method.
TEST(LocalityEntries, ComposeWithCsanWindowsInOneChain) {
  torch::NoGradGuard no_grad;
  torch::manual_seed(7);
  const std::vector<std::pair<std::string, std::shared_ptr<AttentionEntry>>> methods = {
      {"bi_direct", std::make_shared<BiDirectEntry>(kHeads, 2)},
      {"neighbor", std::make_shared<NeighborEntry>(kHeads, 1.5)},
      {"local_soft", std::make_shared<LocalSoftEntry>(kDim, kHeads, 1)},
      {"block", std::make_shared<BlockEntry>(kDim, kHeads, 4, 0.0)}};
  auto x = torch::randn({2, 12, kDim});
  auto mask = torch::zeros({2, 12}, torch::kBool);
  mask[1].narrow(0, 9, 3).fill_(true);
  AttentionCall call;
  call.key_padding_mask = mask;
  // Padding queries see nothing inside a window of padding; only real ones are compared.
  auto differ = [valid = mask.logical_not().unsqueeze(-1)](const torch::Tensor& a, const torch::Tensor& b) {
    return torch::where(valid, a - b, torch::zeros({})).abs().max().item<double>();
  };
  for (const auto& [name, entry] : methods) {
    auto csan = make_locality_attention(), formula = make_locality_attention();
    csan->add_entry("csan", std::make_shared<CsanEntry>(CsanWindow{5, 1, HeadBoundary::Truncate}, 0));
    csan->add_entry(name, entry);
    formula->add_entry(name, entry);
    formula->add_entry("window", std::make_shared<WindowMask>(2));
    formula->add_entry("identity", std::make_shared<IdentityProbabilities>());
    csan->eval(), formula->eval();
    EXPECT_LT(differ(csan(x, x, x, call), formula(x, x, x, call)), 1e-5) << name;

    auto wide = make_locality_attention(), narrow = make_locality_attention();
    wide->add_entry("csan", std::make_shared<CsanEntry>(CsanWindow{11, 3, HeadBoundary::Truncate}, 0));
    wide->add_entry(name, entry);
    wide->add_entry("window", std::make_shared<WindowMask>(1));
    narrow->add_entry("csan", std::make_shared<CsanEntry>(CsanWindow{3, 3, HeadBoundary::Truncate}, 0));
    narrow->add_entry(name, entry);
    wide->eval(), narrow->eval();
    EXPECT_LT(differ(wide(x, x, x, call), narrow(x, x, x, call)), 1e-5) << name;
  }
}

TEST(LocalityEntries, MethodsOnTheGeneralPathCannotFollowCsan) {
  auto csan = [] { return std::make_shared<CsanEntry>(CsanWindow{5, 1, HeadBoundary::Truncate}, 0); };
  const std::vector<std::pair<std::string, std::shared_ptr<AttentionEntry>>> methods = {
      {"rel_pos", std::make_shared<RelPosEntry>(kHeadDim, 4)},
      {"local_hard", std::make_shared<LocalHardEntry>(kDim, kHeads, 0, 3)}};
  for (const auto& [name, entry] : methods) {
    auto m = make_locality_attention();
    m->add_entry("csan", csan());
    try {
      m->add_entry(name, entry);
      ADD_FAILURE() << name << " joined a chain with csan";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("cannot be combined"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
