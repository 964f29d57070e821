#include "toolkit/nn/multihead_attention.h"

#include <gtest/gtest.h>

#include <cmath>

#include "toolkit/nn/parameter_count.h"

namespace {

using namespace csan::nn;

MultiheadAttention make_attention(bool bias = true, int64_t d = 16, int64_t heads = 4) {
  torch::manual_seed(7);
  MultiheadAttention mha(MultiheadAttentionOptions{d, heads, 0.0, bias});
  mha->eval();
  return mha;
}

// An independent implementation: LibTorch's own (time-first) multi-head attention with
// the same weights.
torch::Tensor reference(MultiheadAttention& mha, const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                        const torch::Tensor& key_padding_mask = {}, const torch::Tensor& attn_mask = {}) {
  namespace F = torch::nn::functional;
  auto options = F::MultiheadAttentionForwardFuncOptions(
                     mha->options().embed_dim, mha->options().num_heads, mha->in_proj_weight,
                     mha->in_proj_bias.defined() ? mha->in_proj_bias : torch::zeros({3 * mha->options().embed_dim}), {},
                     {}, false, 0.0, mha->out_proj->weight,
                     mha->out_proj->bias.defined() ? mha->out_proj->bias : torch::zeros({mha->options().embed_dim}))
                     .training(false);
  if (key_padding_mask.defined()) options.key_padding_mask(key_padding_mask);
  if (attn_mask.defined()) options.attn_mask(attn_mask);
  auto out =
      std::get<0>(F::multi_head_attention_forward(q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1), options));
  return out.transpose(0, 1);
}

TEST(MultiheadAttention, ParameterCountIsFourProjections) {
  EXPECT_EQ(count_parameters(*make_attention(true, 16, 4)), 4 * 16 * 16 + 4 * 16);
  EXPECT_EQ(count_parameters(*make_attention(false, 16, 4)), 4 * 16 * 16);
  EXPECT_THROW(MultiheadAttention(MultiheadAttentionOptions{10, 4, 0.0, true}), std::exception);
}

TEST(MultiheadAttention, SelfAttentionMatchesLibTorchReference) {
  auto mha = make_attention();
  auto x = torch::randn({3, 5, 16});
  EXPECT_TRUE(torch::allclose(mha(x, x, x), reference(mha, x, x, x), 1e-5, 1e-5));
}

TEST(MultiheadAttention, CrossAndCrossedAttentionMatchReference) {
  for (bool bias : {true, false}) {
    auto mha = make_attention(bias);
    auto q = torch::randn({2, 3, 16}), kv = torch::randn({2, 6, 16}), v = torch::randn({2, 6, 16});
    EXPECT_TRUE(torch::allclose(mha(q, kv, kv), reference(mha, q, kv, kv), 1e-5, 1e-5));
    EXPECT_TRUE(torch::allclose(mha(q, kv, v), reference(mha, q, kv, v), 1e-5, 1e-5));  // q, k, v all different
  }
}

TEST(MultiheadAttention, KeyPaddingMaskMatchesReferenceAndIgnoresPads) {
  auto mha = make_attention();
  auto q = torch::randn({2, 3, 16}), kv = torch::randn({2, 6, 16});
  auto mask = torch::zeros({2, 6}, torch::kBool);
  mask[0].narrow(0, 4, 2).fill_(true);
  AttentionCall call;
  call.key_padding_mask = mask;
  auto out = mha(q, kv, kv, call);
  EXPECT_TRUE(torch::allclose(out, reference(mha, q, kv, kv, mask), 1e-5, 1e-5));
  // Sentence 0 without its padded keys gives the same result.
  auto kv0 = kv[0].narrow(0, 0, 4).unsqueeze(0);
  EXPECT_TRUE(torch::allclose(out[0], mha(q[0].unsqueeze(0), kv0, kv0)[0], 1e-5, 1e-5));
}

TEST(MultiheadAttention, CausalMaskHidesTheFuture) {
  auto mha = make_attention();
  auto x = torch::randn({2, 5, 16});
  AttentionCall call;
  call.causal = true;
  auto out = mha(x, x, x, call);
  auto future = torch::full({5, 5}, -INFINITY).triu(1);  // additive mask
  EXPECT_TRUE(torch::allclose(out, reference(mha, x, x, x, {}, future), 1e-5, 1e-5));
  auto changed = x.clone();
  changed.narrow(1, 3, 2).normal_();
  EXPECT_TRUE(torch::allclose(mha(changed, changed, changed, call).narrow(1, 0, 3), out.narrow(1, 0, 3), 1e-5, 1e-5));
}

TEST(MultiheadAttention, IncrementalSelfAttentionEqualsFullCausal) {
  auto mha = make_attention();
  auto x = torch::randn({2, 6, 16});
  AttentionCall full;
  full.causal = true;
  auto expected = mha(x, x, x, full);
  IncrementalState state;
  AttentionCall step = full;
  step.state = &state;
  step.cache_key = "l0";
  // A prefix of 2 in one call, then one position at a time.
  auto first = x.narrow(1, 0, 2);
  std::vector<torch::Tensor> outs{mha(first, first, first, step)};
  for (int64_t t = 2; t < 6; ++t) {
    auto xt = x.narrow(1, t, 1);
    outs.push_back(mha(xt, xt, xt, step));
  }
  EXPECT_TRUE(torch::allclose(torch::cat(outs, 1), expected, 1e-5, 1e-5));
  EXPECT_EQ(state.at("l0.prev_key").size(2), 6);
}

TEST(MultiheadAttention, StaticKeysValuesAreProjectedOnceAndReused) {
  auto mha = make_attention();
  auto q = torch::randn({2, 1, 16}), enc = torch::randn({2, 4, 16});
  IncrementalState state;
  AttentionCall call;
  call.state = &state;
  call.cache_key = "cross";
  call.static_kv = true;
  auto first = mha(q, enc, enc, call);
  auto cached_key = state.at("cross.prev_key");
  auto second = mha(q, torch::Tensor(), torch::Tensor(), call);  // encoder output no longer needed
  EXPECT_TRUE(torch::equal(first, second));
  EXPECT_TRUE(state.at("cross.prev_key").is_same(cached_key));
}

// An entry that lets every query see only the key at its own position (a bias of -inf
// elsewhere), computed from the positions the module passes.
class DiagonalEntry : public AttentionEntry {
 public:
  unsigned uses() const override { return kBias; }
  torch::Tensor bias(const AttentionInputs& in) override {
    auto allowed = in.query_positions().unsqueeze(1).eq(in.key_positions().unsqueeze(0));
    return torch::zeros({1, 1, in.query_length, in.key_length}).masked_fill(allowed.logical_not(), -INFINITY);
  }
};

// A bias-only entry runs in the fused kernel (full sequence) and in the decoding kernel
// (one incremental step), with the absolute positions of cached steps.
TEST(MultiheadAttention, BiasEntryShapesScoresWithoutNewParametersInEveryKernel) {
  auto mha = make_attention();
  mha->eval();
  const auto before = count_parameters(*mha);
  mha->add_entry("diagonal", std::make_shared<DiagonalEntry>());
  EXPECT_EQ(count_parameters(*mha), before);
  auto x = torch::randn({2, 5, 16});
  // Each query attends only to itself: the output is out_proj(v_proj(x)).
  auto v = torch::nn::functional::linear(x, mha->in_proj_weight.narrow(0, 32, 16), mha->in_proj_bias.narrow(0, 32, 16));
  EXPECT_TRUE(torch::allclose(mha(x, x, x), mha->out_proj(v), 1e-5, 1e-5));
  // The context carries the absolute query position in incremental decoding.
  IncrementalState state;
  AttentionCall step;
  step.causal = true;
  step.state = &state;
  step.cache_key = "s";
  for (int64_t t = 0; t < 5; ++t) {
    auto xt = x.narrow(1, t, 1);
    EXPECT_TRUE(torch::allclose(mha(xt, xt, xt, step), mha->out_proj(v.narrow(1, t, 1)), 1e-5, 1e-5)) << t;
  }
}

TEST(AttentionEntryRegistry, UnknownNamesListKnownOnes) {
  ASSERT_TRUE(attention_entry_registry().contains("csan"));
  try {
    attention_entry_registry().get("windoww");
    FAIL();
  } catch (const std::exception& e) {
    EXPECT_EQ(std::string(e.what()).rfind("unknown attention entry 'windoww'; known: ", 0), 0u) << e.what();
    EXPECT_NE(std::string(e.what()).find("csan"), std::string::npos);
  }
}

TEST(MultiheadAttention, AttentionDropoutOnlyInTraining) {
  torch::manual_seed(1);
  MultiheadAttention mha(MultiheadAttentionOptions{16, 4, 0.5, true});
  auto x = torch::randn({2, 5, 16});
  mha->eval();
  EXPECT_TRUE(torch::equal(mha(x, x, x), mha(x, x, x)));
  mha->train();
  EXPECT_FALSE(torch::allclose(mha(x, x, x), mha(x, x, x)));
}

TEST(ParameterCount, SharedTensorsCountOnce) {
  struct Tied : torch::nn::Module {
    Tied() {
      a = register_module("a", torch::nn::Linear(4, 3));
      b = register_module("b", a);  // the same module under two names
      c = register_module("c", torch::nn::Linear(2, 2));
    }
    torch::nn::Linear a{nullptr}, b{nullptr}, c{nullptr};
  } tied;
  EXPECT_EQ(count_parameters(tied), 4 * 3 + 3 + 2 * 2 + 2);
}

}  // namespace
