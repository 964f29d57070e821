#include "toolkit/models/transformer.h"

#include <gtest/gtest.h>

#include "tests/support/model_fixtures.h"
#include "toolkit/core/error.h"
#include "toolkit/models/model_registry.h"
#include "toolkit/nn/init.h"
#include "toolkit/nn/parameter_count.h"

namespace {

using namespace csan;
using models::ModelContext;

// Counting needs shapes only: skipping the random initialization keeps big models fast.
int64_t parameter_count(const std::string& yaml, const ModelContext& context) {
  nn::SkipInitialization skip;
  return nn::count_parameters(*models::build_model(csan::testing::recipe(yaml), context));
}

TEST(TransformerParameters, PostNormBaseAndBigMatchFairseq) {
  const int64_t v = 33712;
  const std::string shared = "  share_all_embeddings: true\n";
  EXPECT_EQ(parameter_count("model:\n  arch: transformer_base\n" + shared, csan::testing::joined(v)),
            44138496 + 512 * v);
  EXPECT_EQ(parameter_count("model:\n  arch: transformer_big\n" + shared, csan::testing::joined(v)),
            176357376 + 1024 * v);
}

TEST(TransformerParameters, PreNormBiasFreeMatchesCcnTable) {
  const std::string shared = "  share_all_embeddings: true\n";
  EXPECT_EQ(parameter_count("model:\n  arch: transformer_base_prenorm\n" + shared, csan::testing::joined(33712)),
            61364224);
  EXPECT_EQ(parameter_count("model:\n  arch: transformer_big_prenorm\n" + shared, csan::testing::joined(33712)),
            210808832);
  EXPECT_EQ(parameter_count("model:\n  arch: transformer_base_prenorm\n" + shared, csan::testing::joined(23008)),
            55883776);
  EXPECT_EQ(parameter_count("model:\n  arch: transformer_big_prenorm\n" + shared, csan::testing::joined(23008)),
            199847936);
  // The same variant spelled out with options: 168 d^2 + 124 d + V d.
  const int64_t d = 64, v = 100;
  EXPECT_EQ(parameter_count("model:\n  arch: transformer\n  embed_dim: 64\n  ffn_dim: 256\n  heads: 4\n"
                            "  normalize_before: true\n  attn_bias: false\n" +
                                shared,
                            csan::testing::joined(v)),
            168 * d * d + 124 * d + v * d);
}

TEST(TransformerParameters, EmbeddingSharingOptions) {
  const int64_t d = 64, src = 90, tgt = 70;
  // tiny: 2 + 2 layers, FFN 4d. Post-norm layers with biases, no final norms.
  const int64_t layers = 2 * (12 * d * d + 13 * d) + 2 * (16 * d * d + 19 * d);
  const auto separate = ModelContext::translation(src, tgt, 1, false);
  EXPECT_EQ(parameter_count("model:\n  arch: transformer_tiny\n", separate), layers + src * d + 2 * tgt * d);
  EXPECT_EQ(parameter_count("model:\n  arch: transformer_tiny\n  share_decoder_input_output_embed: true\n", separate),
            layers + src * d + tgt * d);
  EXPECT_EQ(
      parameter_count("model:\n  arch: transformer_tiny\n  share_all_embeddings: true\n", csan::testing::joined(src)),
      layers + src * d);
  // Learned positions: (max_positions + padding_idx + 1) x d for each side.
  EXPECT_EQ(parameter_count("model:\n  arch: transformer_tiny\n  share_all_embeddings: true\n  learned_pos: true\n"
                            "  max_source_positions: 50\n  max_target_positions: 60\n",
                            csan::testing::joined(src)),
            layers + src * d + (52 + 62) * d);
}

TEST(Transformer, InitializesLikeFairseq) {
  torch::manual_seed(2);
  auto model = std::dynamic_pointer_cast<models::TransformerModel>(models::build_model(
      csan::testing::recipe("model:\n  arch: transformer_tiny\n"), ModelContext::translation(3000, 3000, 1, false)));
  ASSERT_TRUE(model);
  auto embed = model->encoder->embed_tokens->weight;
  EXPECT_EQ(embed[1].abs().sum().item<float>(), 0.0f);      // padding row
  EXPECT_NEAR(embed.std().item<float>(), 1.0 / 8.0, 0.01);  // N(0, d^-1/2), d = 64
  auto layer = model->encoder->layers[0]->as<nn::EncoderLayer>();
  // Xavier uniform bound sqrt(6 / (in + out)) on the FFN, zero biases.
  EXPECT_LE(layer->ffn->fc1->weight.abs().max().item<float>(), std::sqrt(6.0 / (64 + 256)));
  EXPECT_GT(layer->ffn->fc1->weight.abs().max().item<float>(), 0.9 * std::sqrt(6.0 / (64 + 256)));
  EXPECT_EQ(layer->ffn->fc1->bias.abs().sum().item<float>(), 0.0f);
  EXPECT_EQ(layer->self_attn->out_proj->bias.abs().sum().item<float>(), 0.0f);
}

TEST(Transformer, ShareAllEmbeddingsNeedsJoinedDictionary) {
  try {
    models::build_model(csan::testing::recipe("model:\n  arch: transformer_tiny\n  share_all_embeddings: true\n"),
                        ModelContext::translation(90, 90, 1, false));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "key 'model.share_all_embeddings': requires a joined dictionary "
                 "(preprocess with --joined-dictionary)");
  }
}

TEST(Transformer, PresetFillsDefaultsThatTheRecipeOverrides) {
  auto cfg = csan::testing::recipe("model:\n  arch: transformer_big\n  embed_dim: 256\n  heads: 4\n");
  EXPECT_EQ(cfg.get<int64_t>("model.embed_dim"), 256);
  EXPECT_EQ(cfg.get<int64_t>("model.ffn_dim"), 4096);
  EXPECT_DOUBLE_EQ(cfg.get<double>("model.dropout"), 0.3);
  auto model = std::dynamic_pointer_cast<models::TransformerModel>(models::build_model(cfg, csan::testing::joined(50)));
  ASSERT_TRUE(model);
  EXPECT_EQ(model->options().layer.embed_dim, 256);
  EXPECT_EQ(model->options().layer.ffn_dim, 4096);
  EXPECT_EQ(model->max_source_positions(), 1024);
  // Unknown architecture names list the known ones.
  core::ConfigSchema schema;
  models::declare_model_options(schema);
  core::Config bad(schema);
  EXPECT_THROW(bad.load_yaml_string("model:\n  arch: lstm\n"), Error);
  EXPECT_NE(models::registered_archs().size(), 0u);
  try {
    models::arch_registry().get("lstm");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind("unknown arch 'lstm'; known: ", 0), 0u) << message;
    for (const char* name : {"transformer, ", "transformer_base, ", "transformer_big, ", "transformer_tiny"})
      EXPECT_NE(message.find(name), std::string::npos) << name;
  }
}

// A tiny model in eval mode, random tokens without padding (ids >= 4).
struct Fixture {
  std::shared_ptr<models::EncoderDecoderModel> model;
  explicit Fixture(const std::string& extra = "") {
    torch::manual_seed(11);
    model = csan::testing::translation_model(
        csan::testing::recipe("model:\n  arch: transformer_tiny\n  share_all_embeddings: true\n" + extra),
        csan::testing::joined(40));
    model->eval();
  }
  static torch::Tensor tokens(int64_t b, int64_t t) { return torch::randint(4, 40, {b, t}, torch::kLong); }
};

TEST(Transformer, IncrementalDecodingGivesFullDecodingLogits) {
  torch::NoGradGuard no_grad;
  for (std::string extra : {"", "  normalize_before: true\n  attn_bias: false\n", "  learned_pos: true\n"}) {
    Fixture f(extra);
    auto src = Fixture::tokens(3, 7), prev = Fixture::tokens(3, 6);
    src[1].narrow(0, 5, 2).fill_(1);  // some source padding
    auto enc = f.model->encode_tokens(src, torch::tensor({7, 5, 7}));
    auto full = f.model->decode(prev, enc);
    ASSERT_EQ(full.sizes(), (std::vector<int64_t>{3, 6, 40}));
    nn::IncrementalState state;
    std::vector<torch::Tensor> steps;
    for (int64_t t = 1; t <= 6; ++t) steps.push_back(f.model->decode(prev.narrow(1, 0, t), enc, &state));
    for (const auto& s : steps) ASSERT_EQ(s.size(1), 1);
    EXPECT_LT((torch::cat(steps, 1) - full).abs().max().item<float>(), 1e-5) << extra;
  }
}

TEST(Transformer, ReorderedStateContinuesLikeReorderedBatch) {
  torch::NoGradGuard no_grad;
  Fixture f;
  auto src = Fixture::tokens(3, 5), prev = Fixture::tokens(3, 4);
  auto enc = f.model->encode_tokens(src, torch::tensor({5, 5, 5}));
  nn::IncrementalState state;
  for (int64_t t = 1; t <= 3; ++t) f.model->decode(prev.narrow(1, 0, t), enc, &state);
  auto order = torch::tensor({2, 0, 0}, torch::kLong);  // beam search keeps/duplicates rows
  state.reorder(order);
  enc.reorder(order);
  auto reordered = prev.index_select(0, order);
  auto step = f.model->decode(reordered, enc, &state);
  auto full = f.model->forward(src.index_select(0, order), torch::tensor({5, 5, 5}), reordered);
  EXPECT_LT((step.squeeze(1) - full.select(1, 3)).abs().max().item<float>(), 1e-5);
}

TEST(Transformer, PaddingDoesNotChangeRealPositions) {
  torch::NoGradGuard no_grad;
  Fixture f;
  auto src_a = Fixture::tokens(1, 4), src_b = Fixture::tokens(1, 7);
  auto tgt_a = Fixture::tokens(1, 3), tgt_b = Fixture::tokens(1, 5);
  auto pad = [](const torch::Tensor& t, int64_t len) {
    return torch::cat({t, torch::ones({1, len - t.size(1)}, torch::kLong)}, 1);
  };
  auto src = torch::cat({pad(src_a, 7), src_b}), tgt = torch::cat({pad(tgt_a, 5), tgt_b});
  auto batch = f.model->forward(src, torch::tensor({4, 7}), tgt);
  auto alone_a = f.model->forward(src_a, torch::tensor({4}), tgt_a);
  auto alone_b = f.model->forward(src_b, torch::tensor({7}), tgt_b);
  EXPECT_LT((batch[0].narrow(0, 0, 3) - alone_a[0]).abs().max().item<float>(), 1e-5);
  EXPECT_LT((batch[1] - alone_b[0]).abs().max().item<float>(), 1e-5);
  auto enc = f.model->encode_tokens(src, torch::tensor({4, 7}));
  EXPECT_LT((enc.at("encoder").out[0].narrow(0, 0, 4) -
             f.model->encode_tokens(src_a, torch::tensor({4})).at("encoder").out[0])
                .abs()
                .max()
                .item<float>(),
            1e-5);
  EXPECT_TRUE(
      torch::equal(enc.at("encoder").padding_mask[0], torch::tensor({false, false, false, false, true, true, true})));
}

// A parameter-free entry keeping only the key at the query's own position.
class OwnPositionEntry : public nn::AttentionEntry {
 public:
  unsigned uses() const override { return kBias; }
  torch::Tensor bias(const nn::AttentionInputs& in) override {
    auto keep = in.query_positions().unsqueeze(1).eq(in.key_positions().unsqueeze(0));
    return torch::zeros({1, 1, in.query_length, in.key_length}).masked_fill(keep.logical_not(), -INFINITY);
  }
};

TEST(Transformer, AttentionEntriesPlugIntoChosenAttentionsWithoutParameters) {
  torch::NoGradGuard no_grad;
  Fixture f;
  auto model = std::dynamic_pointer_cast<models::TransformerModel>(f.model);
  auto src = Fixture::tokens(2, 5), prev = Fixture::tokens(2, 4);
  auto before = model->forward(src, torch::tensor({5, 5}), prev);
  const auto params = nn::count_parameters(*model);
  int visited = 0, installed = 0;
  model->for_each_attention([&](const nn::AttentionSite& site, nn::MultiheadAttention& attention) {
    ++visited;
    EXPECT_EQ(site.num_heads, 4);
    if (site.role == "encoder.self") {
      attention->add_entry("own_position", std::make_shared<OwnPositionEntry>());
      ++installed;
    }
  });
  EXPECT_EQ(visited, 2 + 2 * 2);
  EXPECT_EQ(installed, 2);
  EXPECT_EQ(nn::count_parameters(*model), params);
  auto after = model->forward(src, torch::tensor({5, 5}), prev);
  EXPECT_GT((after - before).abs().max().item<float>(), 1e-3);
  // Decoder untouched: incremental decoding still matches.
  auto enc = model->encode_tokens(src, torch::tensor({5, 5}));
  nn::IncrementalState state;
  for (int64_t t = 1; t <= 4; ++t) {
    auto step = model->decode(prev.narrow(1, 0, t), enc, &state);
    EXPECT_LT((step.squeeze(1) - after.select(1, t - 1)).abs().max().item<float>(), 1e-5);
  }
}

TEST(Transformer, TrainingModeAppliesDropoutAndGradientsReachEveryParameter) {
  Fixture f;
  f.model->train();
  auto src = Fixture::tokens(2, 5), prev = Fixture::tokens(2, 4);
  auto a = f.model->forward(src, torch::tensor({5, 5}), prev);
  auto b = f.model->forward(src, torch::tensor({5, 5}), prev);
  EXPECT_FALSE(torch::allclose(a, b));
  a.sum().backward();
  for (const auto& p : f.model->named_parameters()) EXPECT_TRUE(p.value().grad().defined()) << p.key();
  // Shared embeddings appear once in parameters() (an optimizer must not step them twice).
  EXPECT_EQ(f.model->parameters().size(), f.model->named_parameters().size());
  int64_t listed = 0;
  for (const auto& p : f.model->parameters()) listed += p.numel();
  EXPECT_EQ(listed, nn::count_parameters(*f.model));
}

}  // namespace
