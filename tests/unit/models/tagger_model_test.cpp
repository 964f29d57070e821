// The convoluted-attention tagger (arch family "tagger"): exact parameter counts of every
// Table 2 preset with the paper's UD dimensions (Conv2d adds exactly 10 parameters per
// head and layer, Temp 3), logits' shapes, the forward pass against the equations of
// tagger_model.h recomposed from the model's own pieces, the character CNN's
// de-duplication, and padding as input (the default) or masked (the option).
#include "toolkit/models/tagger_model.h"

#include <gtest/gtest.h>

#include "tests/support/model_fixtures.h"
#include "toolkit/core/error.h"
#include "toolkit/models/model_registry.h"
#include "toolkit/nn/char_cnn.h"
#include "toolkit/nn/parameter_count.h"

namespace {

using namespace csan;

constexpr int64_t kWords = 1000, kChars = 80, kLabels = 19, kT = 60, kC = 20;

models::ModelContext context(int64_t t = kT) {
  return {{{"words", kWords}, {"chars", kChars}, {"labels", kLabels}, {"positions", t}}, 0, false};
}

core::Config recipe_for(const std::string& arch, const std::string& extra = "") {
  return csan::testing::recipe("task: {name: tagging}\nmodel:\n  arch: " + arch + "\n" + extra);
}

std::shared_ptr<models::TaggerModel> tagger(const core::Config& cfg, const models::ModelContext& ctx = context()) {
  auto model = std::dynamic_pointer_cast<models::TaggerModel>(models::build_model(cfg, ctx));
  if (!model) throw Error("not a tagger");
  return model;
}

int64_t parameters(const std::string& arch, const std::string& extra = "") {
  return nn::count_parameters(*tagger(recipe_for(arch, extra)));
}

models::NamedTensors batch(int64_t b, int64_t t, uint64_t seed) {
  torch::manual_seed(seed);
  return {{"words", torch::randint(2, kWords, {b, t})}, {"chars", torch::randint(0, kChars, {b, t, kC})}};
}

TEST(TaggerModel, ParameterCountsOfTheTable2Presets) {
  // Shared by all: characters (embeddings, 3 convolutions 64 -> 64 of width 5).
  const int64_t chars = kChars * 64 + 3 * (64 * 64 * 5 + 64);
  auto body = [&](int64_t d) { return kWords * 128 + chars + 4 * 3 * d * d + (2 * d + 1) * kLabels; };
  const int64_t san = body(192);
  EXPECT_EQ(parameters("tagger_san"), san);
  EXPECT_EQ(parameters("tagger_pe_add"), san + kT * 128);
  EXPECT_EQ(parameters("tagger"), san + kT * 128);
  EXPECT_EQ(parameters("tagger_pe_con"), body(256) + kT * 64);
  EXPECT_EQ(parameters("tagger_p"), san + 4 * kT * kT);  // first layer only
  EXPECT_EQ(parameters("tagger_r"), san + 4 * 2 * kT);   // first layer only
  EXPECT_EQ(parameters("tagger_p_r"), san + 4 * kT * kT + 4 * 2 * kT);
  const int64_t pe_add = san + kT * 128;
  EXPECT_EQ(parameters("tagger_temp"), pe_add + 4 * 4 * 3);
  EXPECT_EQ(parameters("tagger_conv"), pe_add + 4 * 4 * (3 * kT * kT + kT));
  EXPECT_EQ(parameters("tagger_conv2d"), pe_add + 4 * 4 * 10);
  // Conv2d: exactly 10 per head and layer, Temp 3, whatever the heads and layers.
  for (const auto& [heads, layers] : std::vector<std::pair<int, int>>{{2, 1}, {4, 3}, {8, 2}}) {
    const std::string sizes =
        "  tagger: {heads: " + std::to_string(heads) + ", layers: " + std::to_string(layers) + "}\n";
    const int64_t base = parameters("tagger_pe_add", sizes);
    EXPECT_EQ(parameters("tagger_conv2d", sizes) - base, 10 * heads * layers) << heads << " x " << layers;
    EXPECT_EQ(parameters("tagger_temp", sizes) - base, 3 * heads * layers) << heads << " x " << layers;
  }
}

TEST(TaggerModel, LogitsPerPositionForChunksUpToT) {
  auto model = tagger(recipe_for("tagger_conv2d"));
  model->eval();
  for (int64_t t : {kT, int64_t{17}}) {
    auto logits = model->tag(batch(3, t, 1));
    EXPECT_EQ(logits.sizes(), (std::vector<int64_t>{3, t, kLabels}));
    EXPECT_TRUE(torch::isfinite(logits).all().item<bool>());
  }
  try {
    model->tag(batch(1, kT + 1, 2));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("61 positions, but the model has 60"), std::string::npos) << e.what();
  }
}

// y = W [e; h^L] + b, h^l = h^{l-1} + heads(h^{l-1}) (dropout off), e = [w + p; charcnn].
TEST(TaggerModel, ForwardIsTheEquationsOverItsPieces) {
  for (const std::string arch : {"tagger_pe_add", "tagger_pe_con", "tagger_san"}) {
    auto model = tagger(recipe_for(arch, "  tagger: {layers: 2}\n"), context(12));
    model->eval();
    const auto input = batch(2, 12, 4);
    auto params = model->named_parameters();
    auto e = params["word_embedding"].index({input.at("words")});
    if (arch == "tagger_pe_add") e = e + params["position_embedding"].unsqueeze(0);
    if (arch == "tagger_pe_con") e = torch::cat({e, params["position_embedding"].unsqueeze(0).expand({2, 12, 64})}, -1);
    auto chars = model->named_children()["chars"]->as<nn::CharCnnImpl>();
    e = torch::cat({e, chars->forward_every_word(input.at("chars"))}, -1);
    auto h = e;
    std::vector<nn::MultiheadAttention> layers;
    model->for_each_attention([&](const nn::AttentionSite&, nn::MultiheadAttention& a) { layers.push_back(a); });
    ASSERT_EQ(layers.size(), 2u);
    for (auto& layer : layers) {
      EXPECT_TRUE(layer->out_proj.is_empty());      // no output projection
      EXPECT_FALSE(layer->in_proj_bias.defined());  // bias-free Q/K/V
      h = h + layer(h, h, h);
    }
    auto expected = torch::matmul(torch::cat({e, h}, -1), params["classifier.weight"].t()) + params["classifier.bias"];
    EXPECT_LT((model->tag(input) - expected).abs().max().item<double>(), 1e-4) << arch;
  }
}

TEST(TaggerModel, CharacterCnnRunsEachSpellingOnceWithTheSameValuesAndGradients) {
  torch::manual_seed(6);
  nn::CharCnn cnn(nn::CharCnnOptions{kChars, 16, 12, 5, 3});
  // Repeated spellings, as padding words and frequent words are in a batch.
  auto chars = torch::randint(0, kChars, {2, 9, 7});
  chars[1].narrow(0, 4, 5).copy_(chars[0][2].expand({5, 7}));
  auto once = cnn->forward(chars), every = cnn->forward_every_word(chars);
  EXPECT_EQ(once.sizes(), (std::vector<int64_t>{2, 9, 12}));
  EXPECT_LT((once - every).abs().max().item<double>(), 1e-6);
  auto weights = torch::randn_like(once);
  auto grads = [&](const torch::Tensor& out) {
    for (auto& p : cnn->parameters()) p.mutable_grad() = torch::Tensor();
    (out * weights).sum().backward();
    std::vector<torch::Tensor> g;
    for (auto& p : cnn->parameters()) g.push_back(p.grad().clone());
    return g;
  };
  const auto a = grads(cnn->forward(chars)), b = grads(cnn->forward_every_word(chars));
  for (size_t i = 0; i < a.size(); ++i) EXPECT_LT((a[i] - b[i]).abs().max().item<double>(), 1e-5) << i;
}

// Padding slots are inputs (the authors' protocol): what pads a chunk changes its real
// words' logits, but never another chunk's. With mask_padding they do not matter, even
// through the convolutions over the probabilities (which mix neighbouring rows and columns).
TEST(TaggerModel, PaddingIsAnInputUnlessMasked) {
  for (const std::string arch : {"tagger_conv2d", "tagger_conv", "tagger_p_r"})
    for (const bool masked : {false, true}) {
      SCOPED_TRACE(arch + (masked ? " masked" : ""));
      auto model = tagger(recipe_for(arch, masked ? "  tagger: {mask_padding: true}\n" : ""));
      model->eval();
      auto input = batch(2, kT, 7);
      auto words = input.at("words").clone(), chars = input.at("chars").clone();
      words.narrow(1, 30, 30).fill_(0);  // 30 real words, then padding
      auto logits = model->tag({{"words", words}, {"chars", chars}});
      auto other_chars = chars.clone();
      other_chars[0].narrow(0, 30, 30).random_(0, kChars);  // other padding spelling in row 0
      auto changed = model->tag({{"words", words}, {"chars", other_chars}});
      const double real_difference =
          (changed[0].narrow(0, 0, 30) - logits[0].narrow(0, 0, 30)).abs().max().item<double>();
      if (masked)
        EXPECT_LT(real_difference, 1e-5);
      else
        EXPECT_GT(real_difference, 1e-4);
      EXPECT_LT((changed[1] - logits[1]).abs().max().item<double>(), 1e-5);  // rows are independent
      // A row alone gives the same logits as in the batch.
      EXPECT_LT((model->tag({{"words", words.narrow(0, 1, 1)}, {"chars", chars.narrow(0, 1, 1)}})[0] - logits[1])
                    .abs()
                    .max()
                    .item<double>(),
                1e-5);
    }
}

TEST(TaggerModel, PresetsAreChainsAndWidthsMustSplitIntoHeads) {
  const auto cfg = recipe_for("tagger_p_r");
  EXPECT_EQ(cfg.get<std::vector<std::string>>("model.attention.encoder.self"),
            (std::vector<std::string>{"position_matrix", "relative_bias"}));
  EXPECT_EQ(cfg.get<std::string>("model.tagger.position_embedding"), "none");
  EXPECT_EQ(recipe_for("tagger_conv").get<std::vector<std::string>>("model.attention.encoder.self"),
            (std::vector<std::string>{"attention_conv1d"}));
  try {
    tagger(recipe_for("tagger", "  tagger: {heads: 5}\n"));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "key 'model.tagger.heads': 5 heads do not divide the width 192 (word_dim + char_filters)");
  }
  // The tagger's keys belong to it.
  EXPECT_THROW(csan::testing::recipe("model:\n  arch: transformer_tiny\n  tagger: {heads: 2}\n"), Error);
}

}  // namespace
