#include <gtest/gtest.h>

#include "toolkit/nn/decoder_layer.h"
#include "toolkit/nn/encoder_layer.h"
#include "toolkit/nn/feed_forward.h"
#include "toolkit/nn/parameter_count.h"

namespace {

using namespace csan::nn;

TransformerLayerOptions small(bool pre) {
  TransformerLayerOptions o;
  o.embed_dim = 16, o.ffn_dim = 32, o.heads = 4, o.dropout = 0.0, o.normalize_before = pre;
  return o;
}

TEST(FeedForward, ComputesFc2OfActivationOfFc1) {
  torch::manual_seed(3);
  for (std::string act : {"relu", "gelu"}) {
    FeedForward ffn(FeedForwardOptions{8, 12, act, 0.0});
    auto x = torch::randn({2, 3, 8});
    auto h = ffn->fc1(x);
    h = act == "relu" ? torch::relu(h) : 0.5 * h * (1 + torch::erf(h / std::sqrt(2.0)));
    EXPECT_TRUE(torch::allclose(ffn(x), ffn->fc2(h), 1e-5, 1e-5)) << act;
  }
  EXPECT_THROW(FeedForward(FeedForwardOptions{8, 12, "tanh", 0.0}), std::exception);
}

TEST(EncoderLayer, PostNormAndPreNormFollowTheirFormulas) {
  torch::manual_seed(4);
  auto x = torch::randn({2, 5, 16});
  for (bool pre : {false, true}) {
    EncoderLayer layer(small(pre));
    layer->eval();
    torch::Tensor expected;
    if (pre) {
      auto n = layer->self_attn_layer_norm(x);
      auto h = x + layer->self_attn(n, n, n);
      expected = h + layer->ffn(layer->final_layer_norm(h));
    } else {
      auto h = layer->self_attn_layer_norm(x + layer->self_attn(x, x, x));
      expected = layer->final_layer_norm(h + layer->ffn(h));
    }
    EXPECT_TRUE(torch::allclose(layer(x, torch::Tensor()), expected, 1e-5, 1e-5)) << pre;
  }
}

TEST(Layers, ParameterCountsMatchFairseq) {
  const int64_t d = 16, f = 32;
  // Attention 4d^2 + 4d, FFN 2df + f + d, two layer norms 4d.
  EXPECT_EQ(count_parameters(*EncoderLayer(small(false))), 4 * d * d + 4 * d + 2 * d * f + f + d + 4 * d);
  // Two attentions, FFN, three layer norms.
  EXPECT_EQ(count_parameters(*DecoderLayer(small(false), "l", "encoder")),
            8 * d * d + 8 * d + 2 * d * f + f + d + 6 * d);
  auto no_bias = small(true);
  no_bias.attention_bias = false;
  EXPECT_EQ(count_parameters(*DecoderLayer(no_bias, "l", "encoder")), 8 * d * d + 2 * d * f + f + d + 6 * d);
}

TEST(DecoderLayer, IncrementalEqualsFullForBothNorms) {
  torch::manual_seed(5);
  auto x = torch::randn({2, 4, 16}), enc = torch::randn({2, 3, 16});
  auto enc_mask = torch::tensor({false, false, true, false, false, false}, torch::kBool).view({2, 3});
  for (bool pre : {false, true}) {
    DecoderLayer layer(small(pre), "l0", "encoder");
    layer->eval();
    auto full = layer(x, enc, enc_mask);
    IncrementalState state;
    std::vector<torch::Tensor> steps;
    for (int64_t t = 0; t < 4; ++t) steps.push_back(layer(x.narrow(1, t, 1), enc, enc_mask, &state));
    EXPECT_TRUE(torch::allclose(torch::cat(steps, 1), full, 1e-5, 1e-5)) << pre;
  }
}

}  // namespace
