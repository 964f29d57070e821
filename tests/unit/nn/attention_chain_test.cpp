// The attention chain carries what the next families need, checked with toy entries
// against a naive formula on random inputs, forward and gradient:
//   scores = scaling * q k^T + mask + Σ bias  ->  softmax  ->  probability transforms
//   ->  probs · V + Σ value terms  ->  output projection
// A bias entry that reads q (a Gaussian whose centre comes from the query, as Yang et
// al. 2018) and one with a learned matrix (the tagger's P) run inside the fused training
// kernel and the incremental decoding kernel; scales, probability transforms and
// value-side terms (Shaw et al.'s relative values) run on the general path; CSAN's
// windows compose with biases in one chain.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "tests/support/max_difference.h"
#include "tests/support/window_mask.h"
#include "toolkit/core/error.h"
#include "toolkit/nn/csan_entry.h"
#include "toolkit/nn/multihead_attention.h"

namespace {

using namespace csan;
using namespace csan::nn;
using csan::testing::max_difference;
using csan::testing::WindowMask;

constexpr int64_t kChainDim = 16, kChainHeads = 4, kChainHeadDim = kChainDim / kChainHeads;

// Centre c_i = (i + 1) * sigmoid(q_i . u_h) per head, between the start and the query
// (so it stays put as a causal decoder grows); bias -(c_i - j)^2 / 8. Uses q.
class QueryGaussian : public AttentionEntry {
 public:
  QueryGaussian() { u = register_parameter("u", torch::randn({kChainHeads, kChainHeadDim})); }
  unsigned uses() const override { return kBias; }
  torch::Tensor bias(const AttentionInputs& in) override {
    auto reach = (in.query_positions() + 1).to(torch::kFloat).view({1, 1, -1});
    auto centre = torch::sigmoid((in.q * u).sum(-1)).transpose(1, 2) * reach;  // [B, H, Tq]
    auto j = in.key_positions().to(torch::kFloat).view({1, 1, 1, -1});
    return -(centre.unsqueeze(-1) - j).pow(2) / 8.0;
  }
  torch::Tensor u;
};

// A learned per-head matrix over absolute positions (the tagger's P), up to 16 positions.
class LearnedMatrix : public AttentionEntry {
 public:
  LearnedMatrix() { m = register_parameter("m", torch::randn({kChainHeads, 16, 16})); }
  unsigned uses() const override { return kBias; }
  torch::Tensor bias(const AttentionInputs& in) override {
    return m.narrow(1, in.query_offset, in.query_length).narrow(2, 0, in.key_length).unsqueeze(0);
  }
  torch::Tensor m;
};

// Learnable per-head scalars on q, k and v (the tagger's Temp).
class PerHeadScale : public AttentionEntry {
 public:
  PerHeadScale() { s = register_parameter("s", 1 + 0.3 * torch::randn({3, kChainHeads})); }
  unsigned uses() const override { return kScale; }
  void scale(torch::Tensor& q, torch::Tensor& k, torch::Tensor& v) override {
    auto per_channel = [&](int which) { return s[which].repeat_interleave(kChainHeadDim); };
    q = q * per_channel(0);
    if (k.defined()) k = k * per_channel(1);
    if (v.defined()) v = v * per_channel(2);
  }
  torch::Tensor s;
};

// relu(w * p - 0.01) after the softmax, not renormalized (the tagger's convolutions).
class ReluProbabilities : public AttentionEntry {
 public:
  ReluProbabilities() { w = register_parameter("w", torch::full({1}, 1.5)); }
  unsigned uses() const override { return kProbabilities; }
  torch::Tensor probabilities(torch::Tensor probs, const AttentionInputs&) override {
    return torch::relu(probs * w - 0.01);
  }
  torch::Tensor w;
};

// Σ_j p_ij a_{clip(j - i, ±2)} with a learned table (Shaw et al.'s relative values).
class RelativeValues : public AttentionEntry {
 public:
  RelativeValues() { table = register_parameter("table", torch::randn({5, kChainHeadDim})); }
  unsigned uses() const override { return kValues; }
  torch::Tensor values(const torch::Tensor& probs, const AttentionInputs& in) override {
    auto distance = (in.key_positions().unsqueeze(0) - in.query_positions().unsqueeze(1)).clamp(-2, 2) + 2;
    return torch::einsum("bhij,ijd->bhid", {probs, table.index({distance})});
  }
  torch::Tensor table;
};

MultiheadAttention make_chain_attention(uint64_t seed = 3) {
  torch::manual_seed(seed);
  return MultiheadAttention(MultiheadAttentionOptions{kChainDim, kChainHeads, 0.0, true});
}

AttentionInputs inputs_of(const torch::Tensor& q, const torch::Tensor& k, int64_t offset, const torch::Tensor& mask) {
  AttentionInputs in;
  in.q = q.view({q.size(0), q.size(1), kChainHeads, kChainHeadDim});
  in.k = k.view({k.size(0), k.size(1), kChainHeads, kChainHeadDim});
  in.query_length = q.size(1);
  in.key_length = k.size(1);
  in.query_offset = offset;
  in.key_padding_mask = mask;
  in.scaling = 1.0 / std::sqrt(double(kChainHeadDim));
  return in;
}

// The formula, from the module's weights and the entries' hooks called directly.
torch::Tensor naive_chain_attention(MultiheadAttention& m, const std::vector<std::shared_ptr<AttentionEntry>>& entries,
                                    const torch::Tensor& query, const torch::Tensor& key, const torch::Tensor& mask,
                                    bool causal) {
  auto W = m->in_proj_weight, b = m->in_proj_bias;
  auto q = torch::nn::functional::linear(query, W.narrow(0, 0, kChainDim), b.narrow(0, 0, kChainDim));
  auto k = torch::nn::functional::linear(key, W.narrow(0, kChainDim, kChainDim), b.narrow(0, kChainDim, kChainDim));
  auto v =
      torch::nn::functional::linear(key, W.narrow(0, 2 * kChainDim, kChainDim), b.narrow(0, 2 * kChainDim, kChainDim));
  for (auto& e : entries)
    if (e->uses() & AttentionEntry::kScale) e->scale(q, k, v);
  const int64_t tq = q.size(1), tk = k.size(1), offset = query.is_same(key) ? tk - tq : 0;
  auto in = inputs_of(q, k, offset, mask);
  auto heads = [](const torch::Tensor& x) {
    return x.view({x.size(0), x.size(1), kChainHeads, kChainHeadDim}).transpose(1, 2);
  };
  auto scores = torch::matmul(heads(q), heads(k).transpose(-2, -1)) * in.scaling;
  if (mask.defined()) scores = scores.masked_fill(mask.view({k.size(0), 1, 1, tk}), -INFINITY);
  if (causal) scores = scores.masked_fill(torch::ones({tq, tk}, torch::kBool).triu(tk - tq + 1), -INFINITY);
  for (auto& e : entries)
    if (e->uses() & AttentionEntry::kBias) scores = scores + e->bias(in);
  auto probs = torch::softmax(scores, -1);
  for (auto& e : entries)
    if (e->uses() & AttentionEntry::kProbabilities) probs = e->probabilities(probs, in);
  auto context = torch::matmul(probs, heads(v));
  for (auto& e : entries)
    if (e->uses() & AttentionEntry::kValues) context = context + e->values(probs, in);
  return m->out_proj(context.transpose(1, 2).reshape({query.size(0), tq, kChainDim}));
}

std::vector<torch::Tensor> parameter_gradients(torch::nn::Module& module,
                                               const std::function<torch::Tensor()>& forward) {
  for (auto& p : module.parameters()) p.mutable_grad() = torch::Tensor();
  auto out = forward();
  (out * torch::linspace(-1, 1, out.numel()).view(out.sizes())).sum().backward();
  std::vector<torch::Tensor> grads;
  for (auto& p : module.parameters()) grads.push_back(p.grad().defined() ? p.grad().clone() : torch::zeros_like(p));
  return grads;
}

struct ChainCase {
  std::string name;
  std::vector<std::shared_ptr<AttentionEntry>> entries;
};

// Every toy entry alone and together, self- and cross-attention, with padding and a
// causal mask, training mode: module == formula, forward and gradient (parameters of
// the module and of the entries).
TEST(AttentionChain, EntriesEqualTheFormulaForwardAndGradient) {
  std::vector<ChainCase> cases;
  cases.push_back({"gaussian from q", {std::make_shared<QueryGaussian>()}});
  cases.push_back({"learned matrix", {std::make_shared<LearnedMatrix>()}});
  cases.push_back({"scale", {std::make_shared<PerHeadScale>()}});
  cases.push_back({"probabilities", {std::make_shared<ReluProbabilities>()}});
  cases.push_back({"relative values", {std::make_shared<RelativeValues>()}});
  cases.push_back(
      {"all",
       {std::make_shared<PerHeadScale>(), std::make_shared<QueryGaussian>(), std::make_shared<LearnedMatrix>(),
        std::make_shared<ReluProbabilities>(), std::make_shared<RelativeValues>()}});
  for (const auto& c : cases) {
    for (const bool self : {true, false}) {
      for (const bool causal : {false, true}) {
        if (causal && !self) continue;
        auto mha = make_chain_attention();
        int n = 0;
        for (const auto& e : c.entries) mha->add_entry("e" + std::to_string(n++), e);
        mha->train();
        torch::manual_seed(5);
        auto x = torch::randn({3, 7, kChainDim}), memory = torch::randn({3, 9, kChainDim});
        auto key = self ? x : memory;
        auto mask = torch::zeros({3, key.size(1)}, torch::kBool);
        if (!causal) mask[1].narrow(0, key.size(1) - 3, 3).fill_(true);
        AttentionCall call;
        call.causal = causal;
        call.key_padding_mask = causal ? torch::Tensor() : mask;
        const std::string where = c.name + (self ? " self" : " cross") + (causal ? " causal" : "");
        auto module_out = mha(x, key, key, call);
        auto formula_out = naive_chain_attention(mha, c.entries, x, key, call.key_padding_mask, causal);
        EXPECT_LT((module_out - formula_out).abs().max().item<double>(), 1e-5) << where;
        auto g_module = parameter_gradients(*mha, [&] { return mha(x, key, key, call); });
        auto g_formula = parameter_gradients(
            *mha, [&] { return naive_chain_attention(mha, c.entries, x, key, call.key_padding_mask, causal); });
        EXPECT_LT(max_difference(g_module, g_formula), 1e-4) << where;
        // The entries' own parameters learn.
        for (const auto& e : c.entries)
          for (const auto& p : e->parameters())
            EXPECT_TRUE(p.grad().defined() && p.grad().abs().sum().item<double>() > 0) << where;
      }
    }
  }
}

// Biases keep the fast kernels: the same module gives the same output and gradients
// whether the chain runs in the fused kernel or (with an identity transform added) on
// the general path. The fused kernel also hands the learned bias its gradient,
// broadcast over the batch.
TEST(AttentionChain, BiasEntriesRunInTheFusedKernelAsOnTheGeneralPath) {
  class IdentityProbabilities : public AttentionEntry {
   public:
    unsigned uses() const override { return kProbabilities; }
  };
  auto gaussian = std::make_shared<QueryGaussian>();
  auto matrix = std::make_shared<LearnedMatrix>();
  auto fast = make_chain_attention(), general = make_chain_attention();
  fast->add_entry("gaussian", gaussian), fast->add_entry("matrix", matrix);
  general->add_entry("gaussian", gaussian), general->add_entry("matrix", matrix);
  general->add_entry("identity", std::make_shared<IdentityProbabilities>());
  for (auto* m : {&fast, &general}) (*m)->train();
  torch::manual_seed(8);
  auto x = torch::randn({4, 10, kChainDim});
  auto mask = torch::zeros({4, 10}, torch::kBool);
  mask[2].narrow(0, 6, 4).fill_(true);
  AttentionCall call;
  call.key_padding_mask = mask;
  EXPECT_LT((fast(x, x, x, call) - general(x, x, x, call)).abs().max().item<double>(), 1e-5);
  auto g_fast = parameter_gradients(*fast, [&] { return fast(x, x, x, call); });
  auto g_general = parameter_gradients(*general, [&] { return general(x, x, x, call); });
  EXPECT_LT(max_difference(g_fast, g_general), 1e-4);
  EXPECT_GT(matrix->m.grad().abs().sum().item<double>(), 0);
}

// One new position per step through the decoding kernel with a bias that reads q and
// the positions: each step equals the full causal forward's row.
TEST(AttentionChain, IncrementalSelfAttentionWithBiasesEqualsFull) {
  torch::NoGradGuard no_grad;
  auto mha = make_chain_attention();
  mha->add_entry("gaussian", std::make_shared<QueryGaussian>());
  mha->add_entry("matrix", std::make_shared<LearnedMatrix>());
  mha->eval();
  auto x = torch::randn({3, 9, kChainDim});
  AttentionCall full_call;
  full_call.causal = true;
  auto full = mha(x, x, x, full_call);
  IncrementalState state;
  AttentionCall step_call;
  step_call.causal = true;
  step_call.state = &state;
  step_call.cache_key = "self";
  for (int64_t t = 0; t < 9; ++t) {
    auto xt = x.narrow(1, t, 1);
    EXPECT_LT((mha(xt, xt, xt, step_call) - full.narrow(1, t, 1)).abs().max().item<double>(), 1e-5) << t;
    if (t == 4) state.reorder_beams(torch::tensor({0, 1, 2}));  // history tables in play
  }
}

// Beams share their sentence's encoder keys (3 query rows per key row): the decoding
// kernel with a per-row bias from q equals the general path on copied keys.
TEST(AttentionChain, CrossAttentionOverSharedKeysWithBiasEqualsGeneralPath) {
  torch::NoGradGuard no_grad;
  class IdentityProbabilities : public AttentionEntry {
   public:
    unsigned uses() const override { return kProbabilities; }
  };
  auto gaussian = std::make_shared<QueryGaussian>();
  auto fast = make_chain_attention(), general = make_chain_attention();
  fast->add_entry("gaussian", gaussian);
  general->add_entry("gaussian", gaussian);
  general->add_entry("identity", std::make_shared<IdentityProbabilities>());
  fast->eval(), general->eval();
  auto memory = torch::randn({2, 6, kChainDim});
  auto mask = torch::zeros({2, 6}, torch::kBool);
  mask[1].narrow(0, 4, 2).fill_(true);
  auto q = torch::randn({6, 1, kChainDim});  // 2 sentences x 3 beams, one step
  IncrementalState fast_state, general_state;
  AttentionCall call;
  call.static_kv = true;
  call.key_padding_mask = mask;
  call.cache_key = "cross";
  call.query_offset = 4;
  call.state = &fast_state;
  auto a = fast(q, memory, memory, call);
  call.state = &general_state;
  auto b = general(q, memory, memory, call);
  EXPECT_LT((a - b).abs().max().item<double>(), 1e-5);
}

// CSAN computes its windowed attention itself and takes the chain's other biases: a
// 1-D window plus a learned matrix equals the formula with the window as a -inf mask; a
// 2-D area of 11 positions plus a bias hiding keys more than one position away equals
// the 2-D area of 3 positions.
TEST(AttentionChain, CsanWindowsComposeWithBiases) {
  torch::NoGradGuard no_grad;
  auto x = torch::randn({2, 12, kChainDim});
  {
    auto matrix = std::make_shared<LearnedMatrix>();
    auto composed = make_chain_attention(), formula = make_chain_attention();
    composed->add_entry("csan", std::make_shared<CsanEntry>(CsanWindow{5, 1, HeadBoundary::Truncate}, 0));
    composed->add_entry("matrix", matrix);
    composed->eval();
    auto expected = naive_chain_attention(formula, {std::make_shared<WindowMask>(2), matrix}, x, x, {}, false);
    EXPECT_LT((composed(x, x, x) - expected).abs().max().item<double>(), 1e-5);
  }
  {
    auto wide = make_chain_attention(), narrow = make_chain_attention();
    wide->add_entry("csan", std::make_shared<CsanEntry>(CsanWindow{11, 3, HeadBoundary::Truncate}, 0));
    wide->add_entry("mask", std::make_shared<WindowMask>(1));
    narrow->add_entry("csan", std::make_shared<CsanEntry>(CsanWindow{3, 3, HeadBoundary::Truncate}, 0));
    wide->eval(), narrow->eval();
    EXPECT_LT((wide(x, x, x) - narrow(x, x, x)).abs().max().item<double>(), 1e-5);
  }
}

TEST(AttentionChain, RefusesEntriesItCannotCompose) {
  auto csan_entry = [] { return std::make_shared<CsanEntry>(CsanWindow{5, 1, HeadBoundary::Truncate}, 0); };
  auto expect_error = [](const std::function<void()>& f, const std::string& part) {
    try {
      f();
      ADD_FAILURE() << "no error; expected one mentioning " << part;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  expect_error(
      [&] {
        auto m = make_chain_attention();
        m->add_entry("a", csan_entry());
        m->add_entry("b", csan_entry());
      },
      "both compute the attention");
  expect_error(
      [&] {
        auto m = make_chain_attention();
        m->add_entry("csan", csan_entry());
        m->add_entry("p", std::make_shared<ReluProbabilities>());
      },
      "cannot be combined");
  expect_error(
      [&] {
        auto m = make_chain_attention();
        m->add_entry("x", std::make_shared<LearnedMatrix>());
        m->add_entry("x", std::make_shared<LearnedMatrix>());
      },
      "named twice");
}

}  // namespace
