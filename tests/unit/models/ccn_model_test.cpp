// CCN (Li & Jiang 2020): the Table 1 parameter counts, the crossed wiring of eq. 3-4 in
// the encoder and the decoder (checked by symmetry: swapping the branches' inputs and
// weights swaps their outputs), the gate configuration (plain self-attention gates give
// two Transformer encoders), the input corruption (kept multiset, training only, seeded),
// the attention roles and the errors of its keys.
#include "toolkit/models/ccn_model.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <string>

#include "tests/support/model_fixtures.h"
#include "toolkit/core/error.h"
#include "toolkit/models/ccn_input_corruption.h"
#include "toolkit/models/model_registry.h"
#include "toolkit/models/presets.h"
#include "toolkit/models/transformer.h"
#include "toolkit/nn/csan_entry.h"
#include "toolkit/nn/init.h"
#include "toolkit/nn/parameter_count.h"

namespace {

using csan::testing::error_of;

using namespace csan;
using models::kLeft;
using models::kRight;

constexpr int64_t kVocab = 40, kPad = 1, kEos = 2;

std::shared_ptr<models::CcnModel> build_ccn(const std::string& yaml, int64_t vocab = kVocab) {
  auto model = std::dynamic_pointer_cast<models::CcnModel>(
      models::build_model(csan::testing::recipe(yaml), csan::testing::joined(vocab)));
  EXPECT_TRUE(model) << yaml;
  return model;
}

// Tiny CCN without dropout, so that training mode differs from evaluation only by the
// input corruption.
const std::string kTiny = "model:\n  arch: ccn_tiny\n  share_all_embeddings: true\n  dropout: 0.0\n";

int64_t joined_parameter_count(const std::string& yaml, int64_t vocab) {
  nn::SkipInitialization skip;
  return nn::count_parameters(*models::build_model(csan::testing::recipe(yaml), csan::testing::joined(vocab)));
}

std::string shared(const std::string& arch) { return "model:\n  arch: " + arch + "\n  share_all_embeddings: true\n"; }

// Right-padded sentences of random words (ids 4..kVocab-1) ending with </s>; row i has
// lengths[i] tokens including the </s>.
torch::Tensor sentences(const std::vector<int64_t>& lengths, uint64_t seed) {
  torch::manual_seed(seed);
  const int64_t longest = *std::max_element(lengths.begin(), lengths.end());
  auto tokens = torch::full({static_cast<int64_t>(lengths.size()), longest}, kPad, torch::kLong);
  for (size_t i = 0; i < lengths.size(); ++i) {
    tokens[i].narrow(0, 0, lengths[i] - 1).copy_(torch::randint(4, kVocab, {lengths[i] - 1}, torch::kLong));
    tokens[i][lengths[i] - 1] = kEos;
  }
  return tokens;
}

double max_difference(const torch::Tensor& a, const torch::Tensor& b) { return (a - b).abs().max().item<double>(); }

// Exchanges the values of every parameter of `a` with the same-named one of `b`.
void swap_weights(torch::nn::Module& a, torch::nn::Module& b) {
  torch::NoGradGuard no_grad;
  auto theirs = b.named_parameters();
  for (auto& p : a.named_parameters()) {
    torch::Tensor mine = p.value().clone();
    p.value().copy_(theirs[p.key()]);
    theirs[p.key()].copy_(mine);
  }
}

// ---- Table 1 ---------------------------------------------------------------------------

TEST(CcnParameters, ReproduceAllEightCountsOfTable1) {
  // WMT14 En-De (V 33,712) and WMT16 En-Fi (V 23,008), one shared embedding.
  EXPECT_EQ(joined_parameter_count(shared("transformer_base_prenorm"), 33712), 61364224);
  EXPECT_EQ(joined_parameter_count(shared("ccn_base"), 33712), 114928640);
  EXPECT_EQ(joined_parameter_count(shared("transformer_base_prenorm"), 23008), 55883776);
  EXPECT_EQ(joined_parameter_count(shared("ccn_base"), 23008), 109448192);
  EXPECT_EQ(joined_parameter_count(shared("transformer_big_prenorm"), 33712), 210808832);
  EXPECT_EQ(joined_parameter_count(shared("ccn_big"), 33712), 424892416);
  EXPECT_EQ(joined_parameter_count(shared("transformer_big_prenorm"), 23008), 199847936);
  EXPECT_EQ(joined_parameter_count(shared("ccn_big"), 23008), 413931520);
}

TEST(CcnParameters, ExtraOverTheTransformerIsTheSecondBranchAndTheCrossedDecoderPieces) {
  // Per encoder layer, the second branch: attention 4d^2 (no biases), FFN 8d^2 + 5d, two
  // norms 4d; and its final norm 2d. Per decoder layer: one more attention 4d^2, two more
  // FFNs, the 2d -> d fusion 2d^2 + d, four more norms 8d.
  auto extra = [](int64_t d, int64_t encoder_layers, int64_t decoder_layers) {
    return encoder_layers * (12 * d * d + 9 * d) + 2 * d + decoder_layers * (22 * d * d + 19 * d);
  };
  for (int64_t d : {512, 1024}) EXPECT_EQ(extra(d, 6, 6), 204 * d * d + 170 * d);
  const std::string tiny_prenorm =
      "model:\n  arch: transformer_tiny\n  normalize_before: true\n  attn_bias: false\n  share_all_embeddings: true\n";
  EXPECT_EQ(joined_parameter_count(shared("ccn_tiny"), 100),
            joined_parameter_count(tiny_prenorm, 100) + extra(64, 2, 2));
  // Post-norm with biases: no final norms, and each extra attention has 4d of biases.
  const std::string sizes = "  embed_dim: 32\n  ffn_dim: 64\n  heads: 4\n  encoder_layers: 3\n  decoder_layers: 2\n";
  const int64_t d = 32, ffn = 64;
  const int64_t attention = 4 * d * d + 4 * d, feed_forward = 2 * d * ffn + ffn + d, norm = 2 * d;
  EXPECT_EQ(joined_parameter_count("model:\n  arch: ccn\n" + sizes + "  share_all_embeddings: true\n", 100) -
                joined_parameter_count("model:\n  arch: transformer\n" + sizes + "  share_all_embeddings: true\n", 100),
            3 * (attention + feed_forward + 2 * norm) + 2 * (attention + 2 * feed_forward + 2 * d * d + d + 4 * norm));
}

TEST(CcnPresets, AreTheTransformerSizesInThePapersPreNormSetup) {
  for (const std::string size : {"tiny", "base", "big"}) {
    const auto& ccn = models::arch_registry().get("ccn_" + size).preset;
    for (const auto& [key, value] :
         models::merged(models::transformer_size(size), models::prenorm_without_attention_bias())) {
      ASSERT_TRUE(ccn.count(key)) << size << " lacks " << key;
      EXPECT_TRUE(ccn.at(key) == value) << size << " differs at " << key;
    }
    EXPECT_EQ(models::arch_registry().get("ccn_" + size).attention_roles, models::ccn_attention_roles());
  }
  auto cfg = csan::testing::recipe("model:\n  arch: ccn_base\n");
  EXPECT_DOUBLE_EQ(cfg.get<double>("model.ccn.swap_probability"), 0.5);
  EXPECT_EQ(cfg.get<std::vector<std::string>>("model.ccn.encoder_left_qkv"),
            (std::vector<std::string>{"right", "left", "left"}));
  EXPECT_EQ(cfg.get<std::vector<std::string>>("model.ccn.decoder_right_kv"),
            (std::vector<std::string>{"left", "right"}));
  // Other architectures do not carry the CCN keys in their resolved recipes.
  EXPECT_EQ(csan::testing::recipe("model:\n  arch: transformer_base\n").to_yaml().find("ccn"), std::string::npos);
}

// The model sections of the shipped recipes build the promised models.
TEST(CcnPresets, RecipesBuildTheirPresets) {
  const std::map<std::string, int64_t> expected = {
      {"ccn-base.yaml", 114928640 - 512 * 33712 + 512 * 8000},
      {"ccn-big.yaml", 424892416 - 1024 * 33712 + 1024 * 8000},
      {"ccn-tiny.yaml", joined_parameter_count(shared("ccn_tiny"), 8000)},
  };
  for (const auto& [name, parameters] : expected) {
    const std::string path = std::string(CSAN_SOURCE_DIR) + "/recipes/" + name;
    YAML::Node only_model;
    only_model["model"] = YAML::LoadFile(path)["model"];
    const auto cfg = csan::testing::recipe(YAML::Dump(only_model));
    EXPECT_EQ(cfg.get<std::string>("model.arch").rfind("ccn_", 0), 0u) << path;
    EXPECT_TRUE(cfg.get<bool>("model.normalize_before")) << path;
    EXPECT_FALSE(cfg.get<bool>("model.attn_bias")) << path;
    nn::SkipInitialization skip;
    EXPECT_EQ(nn::count_parameters(*models::build_model(cfg, csan::testing::joined(8000))), parameters) << path;
    // The same recipe with the Transformer's arch is the paper's baseline.
    if (name == "ccn-tiny.yaml") continue;
    const std::string size = name == "ccn-base.yaml" ? "base" : "big";
    only_model["model"]["arch"] = "transformer_" + size + "_prenorm";
    const auto baseline = csan::testing::recipe(YAML::Dump(only_model));
    const int64_t d = size == "base" ? 512 : 1024;
    EXPECT_EQ(nn::count_parameters(*models::build_model(baseline, csan::testing::joined(8000))),
              parameters - (204 * d * d + 170 * d))
        << path;
  }
}

// ---- crossed wiring --------------------------------------------------------------------

// Multi-head attention written out: softmax(q Wq (k Wk)^T / sqrt(d_head)) v Wv, then Wo,
// with keys at padding hidden (the module's projections have no biases in ccn_tiny).
torch::Tensor naive_attention(nn::MultiheadAttention& attention, const torch::Tensor& q, const torch::Tensor& k,
                              const torch::Tensor& v, const torch::Tensor& key_padding) {
  const int64_t d = q.size(-1), heads = attention->options().num_heads, dh = d / heads;
  auto w = attention->in_proj_weight.chunk(3, 0);
  auto split = [&](const torch::Tensor& x) { return x.view({x.size(0), x.size(1), heads, dh}).transpose(1, 2); };
  auto scores = torch::matmul(split(q.matmul(w[0].t())), split(k.matmul(w[1].t())).transpose(-2, -1)) / std::sqrt(dh);
  scores = scores.masked_fill(key_padding.view({k.size(0), 1, 1, k.size(1)}), -INFINITY);
  auto heads_out = torch::matmul(torch::softmax(scores, -1), split(v.matmul(w[2].t())));
  return heads_out.transpose(1, 2).reshape({q.size(0), q.size(1), d}).matmul(attention->out_proj->weight.t());
}

// One encoder layer against eq. 3-4 written out with Fig. 2's crossed gates: the left
// branch's attention takes Q from the right input, K and V from the left; the right's the
// other way round (pre-norm, each input normalized by its own branch's norm).
TEST(CcnEncoder, ALayerComputesTheCrossedCoAttentionOfEquations3And4) {
  torch::NoGradGuard no_grad;
  torch::manual_seed(21);
  auto model = build_ccn(kTiny);
  model->eval();
  auto layer = model->encoder->layers[0]->as<models::CcnEncoderLayer>();
  auto x_left = torch::randn({2, 6, 64}), x_right = torch::randn({2, 6, 64});
  auto padding = torch::zeros({2, 6}, torch::kBool);
  padding[1].narrow(0, 4, 2).fill_(true);
  const auto got = layer->forward({x_left, x_right}, padding);
  auto h_left = layer->left->self_attn_layer_norm(x_left), h_right = layer->right->self_attn_layer_norm(x_right);
  auto y_left = x_left + naive_attention(layer->left->self_attn, h_right, h_left, h_left, padding);
  auto y_right = x_right + naive_attention(layer->right->self_attn, h_left, h_right, h_right, padding);
  y_left = y_left + layer->left->ffn(layer->left->final_layer_norm(y_left));
  y_right = y_right + layer->right->ffn(layer->right->final_layer_norm(y_right));
  auto real = padding.logical_not().unsqueeze(-1);  // outputs at padding are never read
  EXPECT_LT(max_difference(got[kLeft] * real, y_left * real), 1e-5);
  EXPECT_LT(max_difference(got[kRight] * real, y_right * real), 1e-5);
}

// One decoder layer written out: the left branch's encoder-decoder attention takes K from
// the right memory and V from the left, the right branch's K from the left and V from the
// right; each branch's FFN follows; [y_left; y_right] projected 2d -> d around the fusion
// norm; then the layer's FFN.
TEST(CcnDecoder, ALayerComputesTheCrossedEncoderDecoderAttentionsAndTheFusion) {
  torch::NoGradGuard no_grad;
  torch::manual_seed(22);
  auto model = build_ccn(kTiny);
  model->eval();
  auto layer = model->decoder->layers[1]->as<models::CcnDecoderLayer>();
  auto x = torch::randn({2, 5, 64});
  models::MemoryPair memories;
  auto padding = torch::zeros({2, 7}, torch::kBool);
  padding[0].narrow(0, 5, 2).fill_(true);
  memories[kLeft] = {torch::randn({2, 7, 64}), padding};
  memories[kRight] = {torch::randn({2, 7, 64}), padding};
  const auto got = layer->forward(x, memories);

  nn::AttentionCall causal;
  causal.causal = true;
  auto h = layer->self_attn_layer_norm(x);
  auto expected = x + layer->self_attn(h, h, h, causal);
  auto fused_input = layer->fusion_layer_norm(expected);
  auto branch = [&](models::CcnDecoderBranch& b, const torch::Tensor& keys, const torch::Tensor& values) {
    auto y =
        fused_input + naive_attention(b->encoder_attn, b->encoder_attn_layer_norm(fused_input), keys, values, padding);
    return y + b->ffn(b->final_layer_norm(y));
  };
  auto y_left = branch(layer->left, memories[kRight].out, memories[kLeft].out);
  auto y_right = branch(layer->right, memories[kLeft].out, memories[kRight].out);
  expected = expected + torch::cat({y_left, y_right}, -1).matmul(layer->fusion->weight.t()) + layer->fusion->bias;
  expected = expected + layer->ffn(layer->final_layer_norm(expected));
  EXPECT_LT(max_difference(got, expected), 1e-5);
}

// Swapping the branches' inputs and their weights swaps the branches' outputs exactly:
// each branch computes the same function of (its own input, the other's input).
TEST(CcnEncoder, SwappingBothBranchesInputsAndWeightsSwapsTheirOutputsExactly) {
  torch::NoGradGuard no_grad;
  torch::manual_seed(3);
  auto model = build_ccn(kTiny);
  model->eval();
  auto a = sentences({7, 5, 9}, 4), b = sentences({7, 5, 9}, 5);  // two inputs with one padding pattern
  auto before = model->encoder(a, b);
  for (auto& layer : *model->encoder->layers) {
    auto ccn_layer = layer->as<models::CcnEncoderLayer>();
    swap_weights(*ccn_layer->left, *ccn_layer->right);
  }
  swap_weights(*model->encoder->left_layer_norm, *model->encoder->right_layer_norm);
  auto after = model->encoder(b, a);
  EXPECT_TRUE(torch::equal(after.at("left").out, before.at("right").out));
  EXPECT_TRUE(torch::equal(after.at("right").out, before.at("left").out));
  // Not trivially: the two branches differ.
  EXPECT_GT(max_difference(before.at("left").out, before.at("right").out), 1e-2);
}

// Crossed (the default): the left branch's queries come from the right input, so a
// change to the right input alone changes the left branch's output. With plain
// self-attention gates it does not.
TEST(CcnEncoder, TheRightInputReachesTheLeftBranchOnlyThroughCrossedGates) {
  torch::NoGradGuard no_grad;
  auto a = sentences({8, 6}, 6), b = sentences({8, 6}, 7);
  for (const bool crossed : {true, false}) {
    torch::manual_seed(8);
    auto model = build_ccn(kTiny + (crossed ? ""
                                            : "  ccn:\n    encoder_left_qkv: [left, left, left]\n"
                                              "    encoder_right_qkv: [right, right, right]\n"));
    model->eval();
    auto with_a = model->encoder(a, a), with_b = model->encoder(a, b);
    if (crossed)
      EXPECT_GT(max_difference(with_a.at("left").out, with_b.at("left").out), 1e-3);
    else
      EXPECT_TRUE(torch::equal(with_a.at("left").out, with_b.at("left").out));
    EXPECT_GT(max_difference(with_a.at("right").out, with_b.at("right").out), 1e-3);
  }
}

// Eq. 3-4 with alpha = 'left', beta = 'right' for every gate: two Transformer encoders.
// The left memory is exactly a pre-norm Transformer encoder's output with the left weights.
TEST(CcnEncoder, SelfAttentionGatesGiveATransformerEncoderPerBranch) {
  torch::NoGradGuard no_grad;
  torch::manual_seed(9);
  auto ccn = build_ccn(kTiny +
                       "  ccn:\n    encoder_left_qkv: [left, left, left]\n"
                       "    encoder_right_qkv: [right, right, right]\n");
  auto transformer = std::dynamic_pointer_cast<models::TransformerModel>(models::build_model(
      csan::testing::recipe("model:\n  arch: transformer_tiny\n  normalize_before: true\n  attn_bias: false\n"
                            "  share_all_embeddings: true\n  dropout: 0.0\n"),
      csan::testing::joined(kVocab)));
  ASSERT_TRUE(transformer);
  auto ccn_parameters = ccn->named_parameters();
  for (auto& p : transformer->encoder->named_parameters()) {
    std::string name = "encoder." + p.key();
    if (name.rfind("encoder.layers.", 0) == 0) {
      const auto dot = name.find('.', std::string("encoder.layers.").size());
      name.insert(dot, ".left");
    }
    if (name.rfind("encoder.layer_norm.", 0) == 0) name.replace(0, 18, "encoder.left_layer_norm");
    ASSERT_TRUE(ccn_parameters.contains(name)) << name;
    p.value().copy_(ccn_parameters[name]);
  }
  ccn->eval(), transformer->eval();
  auto src = sentences({9, 4, 7}, 10);
  auto expected = transformer->encoder(src).at("encoder").out;
  auto got = ccn->encode_tokens(src, torch::tensor({9, 4, 7}));
  EXPECT_TRUE(torch::equal(got.at("left").out, expected));
  EXPECT_GT(max_difference(got.at("right").out, expected), 1e-2);  // the right branch has its own weights
}

// The decoder's crossed attentions (left: K right, V left; right: K left, V right): swap
// the memories, the branches' weights and the fusion's halves, and the logits stay (up
// to the order of the fusion's sums).
TEST(CcnDecoder, SwappingMemoriesBranchWeightsAndFusionHalvesKeepsTheLogits) {
  torch::NoGradGuard no_grad;
  torch::manual_seed(11);
  auto model = build_ccn(kTiny);
  model->eval();
  auto src = sentences({7, 5}, 12), prev = sentences({6, 6}, 13);
  prev.select(1, 0).fill_(kEos);
  auto memories = model->encoder(src, sentences({7, 5}, 14));
  auto before = model->decode(prev, memories);
  for (auto& layer : *model->decoder->layers) {
    auto ccn_layer = layer->as<models::CcnDecoderLayer>();
    swap_weights(*ccn_layer->left, *ccn_layer->right);
    auto halves = ccn_layer->fusion->weight.chunk(2, 1);
    auto first = halves[0].clone();
    halves[0].copy_(halves[1]), halves[1].copy_(first);
  }
  models::EncoderOut swapped;
  swapped.add("left", memories.at("right"));
  swapped.add("right", memories.at("left"));
  auto after = model->decode(prev, swapped);
  EXPECT_LT(max_difference(after, before), 1e-5);
  // The memories matter: swapping them alone changes the logits.
  EXPECT_GT(max_difference(model->decode(prev, memories), before), 1e-3);
}

// Each decoder branch reads K from one memory and V from the other: with crossed gates a
// change to the left memory alone reaches the right branch (through its keys).
TEST(CcnDecoder, EachBranchReadsBothMemoriesThroughCrossedGates) {
  torch::NoGradGuard no_grad;
  auto src = sentences({6, 8}, 15);
  for (const bool crossed : {true, false}) {
    torch::manual_seed(16);
    auto model = build_ccn(kTiny + (crossed ? ""
                                            : "  ccn:\n    decoder_left_kv: [left, left]\n"
                                              "    decoder_right_kv: [right, right]\n"));
    model->eval();
    auto memories = model->encode_tokens(src, torch::tensor({6, 8}));
    auto prev = sentences({5, 5}, 17);
    prev.select(1, 0).fill_(kEos);
    auto changed = memories;
    // Noise, not a constant shift: a shift of every key by one vector leaves the softmax as it is.
    changed.at("left").out = changed.at("left").out + 0.5 * torch::randn_like(changed.at("left").out);
    // Zero the left branch's fusion columns: what remains is the right branch's path.
    for (auto& layer : *model->decoder->layers)
      layer->as<models::CcnDecoderLayer>()->fusion->weight.narrow(1, 0, 64).zero_();
    const double difference = max_difference(model->decode(prev, memories), model->decode(prev, changed));
    if (crossed)
      EXPECT_GT(difference, 1e-3);
    else
      EXPECT_EQ(difference, 0.0);
  }
}

// ---- input corruption ------------------------------------------------------------------

TEST(CcnCorruption, SwapsTwoTokensBeforeTheEosAndKeepsTheMultiset) {
  auto tokens = torch::arange(4, 4 + 8 * 10, torch::kLong).view({8, 10});  // distinct tokens
  const std::vector<int64_t> lengths = {10, 2, 3, 1, 7, 10, 5, 4};
  for (int64_t r = 0; r < 8; ++r) {
    tokens[r][lengths[r] - 1] = kEos;
    tokens[r].narrow(0, lengths[r], 10 - lengths[r]).fill_(kPad);
  }
  torch::manual_seed(1);
  auto swapped = models::swap_two_tokens(tokens, 1.0, kPad);
  for (int64_t r = 0; r < 8; ++r) {
    EXPECT_TRUE(torch::equal(std::get<0>(swapped[r].sort()), std::get<0>(tokens[r].sort()))) << "row " << r;
    const int64_t moved = swapped[r].ne(tokens[r]).sum().item<int64_t>();
    // One token before the </s> (or none): nothing to swap.
    EXPECT_EQ(moved, lengths[r] >= 3 ? 2 : 0) << "row " << r;
    EXPECT_EQ(swapped[r][lengths[r] - 1].item<int64_t>(), kEos) << "row " << r;
  }
  EXPECT_TRUE(torch::equal(models::swap_two_tokens(tokens, 0.0, kPad), tokens));
}

TEST(CcnCorruption, HappensWithItsProbabilityUniformlyAndIsSeeded) {
  auto tokens = torch::arange(4, 8, torch::kLong).repeat({4000, 1});
  tokens.select(1, 3).fill_(kEos);  // three movable tokens: pairs {0,1}, {0,2}, {1,2}
  torch::manual_seed(2);
  auto swapped = models::swap_two_tokens(tokens, 0.5, kPad);
  auto changed = swapped.ne(tokens);
  const double share = changed.any(1).to(torch::kDouble).mean().item<double>();
  EXPECT_NEAR(share, 0.5, 0.03);
  for (int64_t position = 0; position < 3; ++position)  // each position is in 2 of the 3 pairs
    EXPECT_NEAR(changed.select(1, position).to(torch::kDouble).mean().item<double>(), 0.5 * 2 / 3, 0.03);
  EXPECT_EQ(changed.select(1, 3).sum().item<int64_t>(), 0);
  torch::manual_seed(2);
  EXPECT_TRUE(torch::equal(models::swap_two_tokens(tokens, 0.5, kPad), swapped));
  torch::manual_seed(3);
  EXPECT_FALSE(torch::equal(models::swap_two_tokens(tokens, 0.5, kPad), swapped));
}

// In training each branch encodes its own corrupted copy (left drawn first, then right);
// in evaluation both encode the source as it is.
TEST(CcnCorruption, OnlyInTrainingAndEachBranchItsOwn) {
  torch::NoGradGuard no_grad;
  torch::manual_seed(18);
  auto model = build_ccn(kTiny + "  ccn:\n    swap_probability: 1.0\n");
  auto src = sentences({9, 8, 9, 7}, 19);
  const auto lengths = torch::tensor({9, 8, 9, 7});
  model->eval();
  auto clean = model->encode_tokens(src, lengths);
  auto plain = model->encoder(src, src);
  EXPECT_TRUE(torch::equal(clean.at("left").out, plain.at("left").out));

  model->train();  // dropout is 0: only the corruption differs
  torch::manual_seed(20);
  auto corrupted = model->encode_tokens(src, lengths);
  torch::manual_seed(20);
  auto left = models::swap_two_tokens(src, 1.0, kPad);
  auto right = models::swap_two_tokens(src, 1.0, kPad);
  EXPECT_FALSE(torch::equal(left, right)) << "the branches draw their own swaps";
  auto expected = model->encoder(left, right);
  EXPECT_TRUE(torch::equal(corrupted.at("left").out, expected.at("left").out));
  EXPECT_TRUE(torch::equal(corrupted.at("right").out, expected.at("right").out));
  EXPECT_GT(max_difference(corrupted.at("left").out, clean.at("left").out), 1e-3);

  // Without corruption, training mode encodes as evaluation does.
  auto uncorrupted = build_ccn(kTiny + "  ccn:\n    swap_probability: 0.0\n");
  uncorrupted->train();
  auto train_out = uncorrupted->encode_tokens(src, lengths);
  uncorrupted->eval();
  EXPECT_TRUE(torch::equal(train_out.at("right").out, uncorrupted->encode_tokens(src, lengths).at("right").out));
}

// ---- attention roles and configuration errors -------------------------------------------

TEST(CcnRoles, EveryAttentionSitsAtItsRoleAndChainsInstallThere) {
  nn::SkipInitialization skip;
  auto model = build_ccn(kTiny);
  std::vector<std::string> roles;
  std::vector<bool> self;
  model->for_each_attention([&](const nn::AttentionSite& site, nn::MultiheadAttention& attention) {
    roles.push_back(site.role + "/" + std::to_string(site.layer));
    self.push_back(site.self_attention);
    EXPECT_EQ(attention->site().role, site.role);  // installed by build_model
  });
  EXPECT_EQ(roles, (std::vector<std::string>{"encoder.left.self/0", "encoder.right.self/0", "encoder.left.self/1",
                                             "encoder.right.self/1", "decoder.self/0", "decoder.cross.left/0",
                                             "decoder.cross.right/0", "decoder.self/1", "decoder.cross.left/1",
                                             "decoder.cross.right/1"}));
  EXPECT_EQ(self, (std::vector<bool>{false, false, false, false, true, false, false, true, false, false}));

  // A chain at a CCN role: CSAN's window on the left branch when its gates make it a
  // self-attention; with crossed gates the queries come from the other branch, which
  // the entry refuses naming the role's key.
  auto windowed = build_ccn(kTiny +
                            "  ccn:\n    encoder_left_qkv: [left, left, left]\n"
                            "  attention:\n    encoder.left.self: [csan]\n    decoder.self: [csan]\n"
                            "  csan:\n    encoder_layers: [1]\n    decoder_layers: [0]\n");
  std::string windows;
  windowed->for_each_attention([&](const nn::AttentionSite&, nn::MultiheadAttention& attention) {
    windows += dynamic_cast<nn::CsanEntry*>(attention->chain().computing_entry()) ? "w" : ".";
  });
  EXPECT_EQ(windows, "..w.w.....");
  const auto crossed = error_of([] { build_ccn(kTiny + "  attention:\n    encoder.right.self: [csan]\n"); });
  EXPECT_NE(crossed.find("key 'model.attention.encoder.right.self'"), std::string::npos) << crossed;
  // A Transformer role is not a CCN role.
  const auto foreign = error_of([] { csan::testing::recipe(kTiny + "  attention:\n    encoder.self: [csan]\n"); });
  EXPECT_NE(foreign.find("key 'model.attention.encoder.self'"), std::string::npos) << foreign;
  EXPECT_NE(foreign.find("is not a key of arch ccn_tiny"), std::string::npos) << foreign;
}

TEST(CcnOptions, BadGatesAreErrorsNamingTheKey) {
  const auto length = error_of([] { build_ccn(kTiny + "  ccn:\n    encoder_left_qkv: [right, left]\n"); });
  EXPECT_NE(length.find("key 'model.ccn.encoder_left_qkv'"), std::string::npos) << length;
  EXPECT_NE(length.find("Q, K, V"), std::string::npos) << length;
  const auto decoder = error_of([] { build_ccn(kTiny + "  ccn:\n    decoder_right_kv: [left, right, left]\n"); });
  EXPECT_NE(decoder.find("key 'model.ccn.decoder_right_kv'"), std::string::npos) << decoder;
  const auto value = error_of([] { csan::testing::recipe(kTiny + "  ccn:\n    decoder_left_kv: [middle, left]\n"); });
  EXPECT_NE(value.find("model.ccn.decoder_left_kv"), std::string::npos) << value;
  EXPECT_NE(value.find("middle"), std::string::npos) << value;
  const auto range = error_of([] { csan::testing::recipe(kTiny + "  ccn:\n    swap_probability: 1.5\n"); });
  EXPECT_NE(range.find("model.ccn.swap_probability"), std::string::npos) << range;
}

// The key-ownership check: a recipe mixing CCN and CSAN keys is refused naming the key
// and its owner, in either direction.
TEST(CcnOptions, ARecipeMixingCcnAndCsanKeysIsAnErrorNamingTheKeyAndItsOwner) {
  const auto csan_in_ccn = error_of([] { csan::testing::recipe(kTiny + "  csan:\n    window: 5\n"); });
  EXPECT_NE(csan_in_ccn.find("key 'model.csan.window'"), std::string::npos) << csan_in_ccn;
  EXPECT_NE(csan_in_ccn.find("attention entry csan"), std::string::npos) << csan_in_ccn;
  const auto ccn_in_csan =
      error_of([] { csan::testing::recipe("model:\n  arch: csan2d_tiny\n  ccn:\n    swap_probability: 0.3\n"); });
  EXPECT_NE(ccn_in_csan.find("key 'model.ccn.swap_probability'"), std::string::npos) << ccn_in_csan;
  EXPECT_NE(ccn_in_csan.find("is not a key of arch csan2d_tiny"), std::string::npos) << ccn_in_csan;
  EXPECT_NE(ccn_in_csan.find("arch ccn"), std::string::npos) << ccn_in_csan;
  const auto roles = error_of(
      [] { csan::testing::recipe("model:\n  arch: csan2d_tiny\n  attention:\n    decoder.cross.left: [csan]\n"); });
  EXPECT_NE(roles.find("key 'model.attention.decoder.cross.left'"), std::string::npos) << roles;
}

TEST(CcnModel, ShareAllEmbeddingsNeedsJoinedDictionaryAndBranchesShareTheEmbedding) {
  const auto message = error_of([] {
    models::build_model(csan::testing::recipe(shared("ccn_tiny")), models::ModelContext::translation(90, 90, 1, false));
  });
  EXPECT_EQ(message,
            "key 'model.share_all_embeddings': requires a joined dictionary (preprocess with --joined-dictionary)");
  nn::SkipInitialization skip;
  auto separate = std::dynamic_pointer_cast<models::CcnModel>(models::build_model(
      csan::testing::recipe("model:\n  arch: ccn_tiny\n"), models::ModelContext::translation(90, 70, 1, false)));
  ASSERT_TRUE(separate);
  // One source embedding for both branches, the decoder's own, and its output projection.
  int64_t embeddings = 0;
  for (const auto& p : separate->named_parameters())
    if (p.key().find("embed_tokens") != std::string::npos || p.key().find("output_projection") != std::string::npos)
      embeddings += p.value().numel();
  EXPECT_EQ(embeddings, (90 + 70 + 70) * 64);
}

}  // namespace
