// The csan presets: parameter-free (exact Transformer counts), the csan entry at the
// right sites, paths and decoding modes that agree, configuration errors naming the key.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <memory>
#include <string>

#include "tests/support/model_fixtures.h"
#include "toolkit/core/error.h"
#include "toolkit/models/model_registry.h"
#include "toolkit/models/transformer.h"
#include "toolkit/nn/csan_entry.h"
#include "toolkit/nn/init.h"
#include "toolkit/nn/parameter_count.h"

namespace {

using namespace csan;
using models::ModelContext;

std::shared_ptr<models::TransformerModel> build(const std::string& yaml, int64_t vocab = 40) {
  auto model = std::dynamic_pointer_cast<models::TransformerModel>(
      models::build_model(csan::testing::recipe(yaml), csan::testing::joined(vocab)));
  EXPECT_TRUE(model);
  return model;
}

int64_t arch_parameter_count(const std::string& arch, int64_t vocab) {
  nn::SkipInitialization skip;
  return nn::count_parameters(*build("model:\n  arch: " + arch + "\n  share_all_embeddings: true\n", vocab));
}

TEST(CsanModel, ParameterFreeExactTransformerCounts) {
  const int64_t v = 33712;
  for (const std::string size : {"tiny", "base", "big"}) {
    const int64_t transformer = arch_parameter_count("transformer_" + size, v);
    EXPECT_EQ(arch_parameter_count("csan1d_" + size, v), transformer) << size;
    EXPECT_EQ(arch_parameter_count("csan2d_" + size, v), transformer) << size;
  }
  EXPECT_EQ(arch_parameter_count("csan2d_base", v), 44138496 + 512 * v);
  EXPECT_EQ(arch_parameter_count("csan2d_big", v), 176357376 + 1024 * v);
}

TEST(CsanModel, PresetsRepeatTheTransformerPresets) {
  for (const std::string size : {"tiny", "base", "big"}) {
    const auto& transformer = models::arch_registry().get("transformer_" + size).preset;
    for (const std::string kind : {"csan1d_", "csan2d_"}) {
      const auto& csan = models::arch_registry().get(kind + size).preset;
      for (const auto& [key, value] : transformer) {
        ASSERT_TRUE(csan.count(key)) << kind << size << " lacks " << key;
        EXPECT_TRUE(csan.at(key) == value) << kind << size << " differs at " << key;
      }
    }
  }
  auto cfg = csan::testing::recipe("model:\n  arch: csan2d_base\n");
  EXPECT_EQ(cfg.get<int64_t>("model.csan.window"), 11);
  EXPECT_EQ(cfg.get<int64_t>("model.csan.head_window"), 3);
  EXPECT_EQ(cfg.get<std::string>("model.csan.head_boundary"), "truncate");
  EXPECT_EQ(cfg.get<std::vector<int64_t>>("model.csan.encoder_layers"), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(csan::testing::recipe("model:\n  arch: csan1d_big\n").get<int64_t>("model.csan.head_window"), 1);
  // Other architectures do not carry the CSAN keys in their resolved recipes.
  EXPECT_EQ(csan::testing::recipe("model:\n  arch: transformer_base\n").to_yaml().find("csan"), std::string::npos);
}

// Which attention has a CSAN window (its head window) and which full scope (.).
std::string scope_map(models::TransformerModel& model) {
  std::string out;
  model.for_each_attention([&](const nn::AttentionSite& site, nn::MultiheadAttention& attention) {
    auto* csan = dynamic_cast<nn::CsanEntry*>(attention->chain().computing_entry());
    out += csan ? std::to_string(csan->window().head_window) : std::string(".");
    (void)site;
  });
  return out;
}

TEST(CsanModel, WindowsSitOnTheChosenSelfAttentions) {
  nn::SkipInitialization skip;
  // Order: encoder self-attentions 0-5, then per decoder layer self, cross.
  EXPECT_EQ(scope_map(*build("model:\n  arch: csan2d_base\n")), "333..." + std::string(12, '.'));
  EXPECT_EQ(scope_map(*build("model:\n  arch: csan1d_base\n")), "111..." + std::string(12, '.'));
  EXPECT_EQ(scope_map(*build("model:\n  arch: csan2d_base\n  csan:\n    encoder_layers: [1, 5]\n"
                             "    decoder_layers: [0, 2]\n")),
            ".3...33...3.......");
  EXPECT_EQ(scope_map(*build("model:\n  arch: csan2d_tiny\n")), "3.....");
}

TEST(CsanModel, ConfigurationErrorsNameTheKey) {
  auto expect_error = [](const std::string& yaml, const std::string& key) {
    try {
      nn::SkipInitialization skip;
      build(yaml);
      ADD_FAILURE() << "no error for " << yaml;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("'" + key + "'"), std::string::npos) << e.what();
    }
  };
  expect_error("model:\n  arch: csan1d_tiny\n  csan:\n    window: 10\n", "model.csan.window");
  expect_error("model:\n  arch: csan2d_tiny\n  csan:\n    head_window: 2\n", "model.csan.head_window");
  expect_error("model:\n  arch: csan2d_tiny\n  csan:\n    encoder_layers: [0, 2]\n", "model.csan.encoder_layers");
  expect_error("model:\n  arch: csan2d_tiny\n  csan:\n    decoder_layers: [7]\n", "model.csan.decoder_layers");
  expect_error("model:\n  arch: csan2d_tiny\n  csan:\n    head_window: 5\n    head_boundary: wrap\n",
               "model.csan.head_window");
  EXPECT_THROW(csan::testing::recipe("model:\n  arch: csan2d_tiny\n  csan:\n    head_boundary: clamp\n"), Error);
}

torch::Tensor tokens(int64_t b, int64_t t) { return torch::randint(4, 40, {b, t}, torch::kLong); }

// Copies every parameter and buffer of `from` into `to` (same names).
void copy_weights(torch::nn::Module& from, torch::nn::Module& to) {
  torch::NoGradGuard no_grad;
  auto source = from.named_parameters();
  for (auto& p : to.named_parameters()) p.value().copy_(source[p.key()]);
}

TEST(CsanModel, WindowCoveringTheSentenceGivesTheTransformer) {
  torch::NoGradGuard no_grad;
  torch::manual_seed(4);
  auto transformer = build("model:\n  arch: transformer_tiny\n  share_all_embeddings: true\n");
  auto csan = build(
      "model:\n  arch: csan1d_tiny\n  share_all_embeddings: true\n  csan:\n    window: 21\n"
      "    encoder_layers: [0, 1]\n    decoder_layers: [0, 1]\n");
  copy_weights(*transformer, *csan);
  transformer->eval(), csan->eval();
  auto src = tokens(2, 9), prev = tokens(2, 8);
  src[1].narrow(0, 6, 3).fill_(1);
  auto expected = transformer->forward(src, torch::tensor({9, 6}), prev);
  EXPECT_LT((csan->forward(src, torch::tensor({9, 6}), prev) - expected).abs().max().item<float>(), 1e-5);
  // A real window changes the output.
  auto windowed = build("model:\n  arch: csan1d_tiny\n  share_all_embeddings: true\n  csan:\n    window: 3\n");
  copy_weights(*transformer, *windowed);
  windowed->eval();
  EXPECT_GT((windowed->forward(src, torch::tensor({9, 6}), prev) - expected).abs().max().item<float>(), 1e-3);
}

TEST(CsanModel, DenseAndBandedPathsAgreeWithGradients) {
  const std::string base =
      "model:\n  arch: csan2d_tiny\n  share_all_embeddings: true\n  dropout: 0.0\n"
      "  csan:\n    window: 5\n    encoder_layers: [0, 1]\n    decoder_layers: [1]\n";
  torch::manual_seed(6);
  auto dense = build(base + "    banded_from_length: 1000\n");
  auto banded = build(base + "    banded_from_length: 1\n");
  copy_weights(*dense, *banded);
  auto src = tokens(3, 37), prev = tokens(3, 33);
  src[2].narrow(0, 20, 17).fill_(1);
  auto lengths = torch::tensor({37, 37, 20});
  auto a = dense->forward(src, lengths, prev), b = banded->forward(src, lengths, prev);
  EXPECT_LT((a - b).abs().max().item<float>(), 1e-5);
  a.logsumexp(-1).sum().backward();
  b.logsumexp(-1).sum().backward();
  auto banded_params = banded->named_parameters();
  for (const auto& p : dense->named_parameters()) {
    auto diff = (p.value().grad() - banded_params[p.key()].grad()).abs().max().item<float>();
    EXPECT_LT(diff, 1e-4) << p.key();
  }
}

// The windowed layers share one mask cache: the second layer reuses the first's bias,
// and batches of other lengths or padding in between never get a stale one.
TEST(CsanModel, ConsecutiveBatchesOfOtherShapesGetTheirOwnMasks) {
  torch::NoGradGuard no_grad;
  torch::manual_seed(9);
  auto model = build(
      "model:\n  arch: csan2d_tiny\n  share_all_embeddings: true\n  csan:\n    window: 3\n"
      "    encoder_layers: [0, 1]\n");
  model->eval();
  struct Batch {
    torch::Tensor src, lengths, prev;
  };
  std::vector<Batch> batches;
  for (auto [t, lengths] : std::vector<std::pair<int64_t, std::vector<int64_t>>>{
           {9, {9, 6}}, {14, {14, 14, 5}}, {9, {9, 3}}, {9, {9, 6}}, {120, {120, 100}}}) {
    const auto sentences = static_cast<int64_t>(lengths.size());
    Batch b{tokens(sentences, t), torch::tensor(lengths), tokens(sentences, 7)};
    for (size_t i = 0; i < lengths.size(); ++i) b.src[i].narrow(0, lengths[i], t - lengths[i]).fill_(1);
    batches.push_back(b);
  }
  auto& cache = *nn::CsanMaskCache::shared();
  std::vector<torch::Tensor> in_a_row;
  const size_t hits_before = cache.hits();
  for (const auto& b : batches) in_a_row.push_back(model->forward(b.src, b.lengths, b.prev));
  EXPECT_GE(cache.hits() - hits_before, batches.size() * 3);  // layer 1: bias + 2 head tables
  for (size_t i = 0; i < batches.size(); ++i) {
    cache.clear();
    auto alone = model->forward(batches[i].src, batches[i].lengths, batches[i].prev);
    EXPECT_TRUE(torch::equal(alone, in_a_row[i])) << "batch " << i;
  }
}

TEST(CsanModel, IncrementalDecodingWithLeftWindowMatchesFullDecoding) {
  torch::NoGradGuard no_grad;
  for (const std::string arch : {"csan1d_tiny", "csan2d_tiny"}) {
    torch::manual_seed(8);
    auto model = build("model:\n  arch: " + arch +
                       "\n  share_all_embeddings: true\n  csan:\n    window: 5\n"
                       "    decoder_layers: [0, 1]\n");
    model->eval();
    auto src = tokens(2, 6), prev = tokens(2, 9);
    auto enc = model->encode_tokens(src, torch::tensor({6, 6}));
    auto full = model->decode(prev, enc);
    nn::IncrementalState state;
    std::vector<torch::Tensor> steps;
    for (int64_t t = 1; t <= 9; ++t) steps.push_back(model->decode(prev.narrow(1, 0, t), enc, &state));
    EXPECT_LT((torch::cat(steps, 1) - full).abs().max().item<float>(), 1e-5) << arch;
    // The left window is real: the full-scope decoder gives other logits.
    auto plain = build("model:\n  arch: " + arch + "\n  share_all_embeddings: true\n  csan:\n    window: 5\n");
    copy_weights(*model, *plain);
    plain->eval();
    EXPECT_GT((plain->decode(prev, enc) - full).abs().max().item<float>(), 1e-4) << arch;
  }
}

// The model sections of the shipped recipes build the promised models. (Training
// sections belong to the trainer's schema.)
TEST(CsanModel, RecipesBuildTheirPresets) {
  for (const std::string kind : {"1d", "2d"})
    for (const std::string size : {"base", "big"}) {
      const std::string path = std::string(CSAN_SOURCE_DIR) + "/recipes/csan-" + kind + "-" + size + ".yaml";
      YAML::Node only_model;
      only_model["model"] = YAML::LoadFile(path)["model"];
      const auto cfg = csan::testing::recipe(YAML::Dump(only_model));
      EXPECT_EQ(cfg.get<std::string>("model.arch"), "csan" + kind + "_" + size);
      EXPECT_EQ(cfg.get<int64_t>("model.csan.window"), 11);
      EXPECT_EQ(cfg.get<int64_t>("model.csan.head_window"), kind == "1d" ? 1 : 3);
      EXPECT_EQ(cfg.get<std::vector<int64_t>>("model.csan.encoder_layers"), (std::vector<int64_t>{0, 1, 2}));
      EXPECT_TRUE(cfg.get<std::vector<int64_t>>("model.csan.decoder_layers").empty());
      nn::SkipInitialization skip;
      auto model = models::build_model(cfg, csan::testing::joined(8000));
      EXPECT_EQ(nn::count_parameters(*model), size == "base" ? 44138496 + 512 * 8000 : 176357376 + 1024 * 8000) << path;
    }
}

}  // namespace
