// The locality methods CSAN's Table 1 compares, in a decoder where the method allows a
// causal form (REL_POS, NEIGHBOR, LOCAL_SOFT and LOCAL_HARD in self- and
// cross-attention, CNNs as causal convolutions): incremental decoding, with beams
// reordered within their sentences and a sentence leaving the batch, equals the full
// forward over the whole target (so no position reads a later one).
#include <gtest/gtest.h>

#include "tiny_model.h"
#include "toolkit/nn/incremental_state.h"

namespace {

using namespace csan;
using namespace csan::generation::testing;

std::shared_ptr<models::EncoderDecoderModel> locality_model(const std::string& method, const std::string& settings,
                                                            uint64_t seed) {
  const auto cfg =
      csan::testing::recipe("model:\n  arch: locality_" + method + "_tiny\n  max_target_positions: 64\n" + settings);
  torch::manual_seed(seed);
  auto model = csan::testing::translation_model(cfg, csan::testing::joined(kVocab));
  model->eval();
  return model;
}

void expect_incremental_equals_full(models::EncoderDecoderModel& model, const std::string& method) {
  torch::NoGradGuard no_grad;
  constexpr int64_t kBeam = 3;
  auto batch = random_sources(3, 31);
  auto encoder_out = model.encode_tokens(batch.tokens, batch.lengths);
  std::vector<int64_t> sentence_of_row;
  for (int64_t s = 0; s < 3; ++s)
    for (int64_t b = 0; b < kBeam; ++b) sentence_of_row.push_back(s);
  auto target = torch::randint(4, kVocab, {3 * kBeam, 9}, torch::kLong);  // each row's whole target
  target.select(1, 0).fill_(kEos);
  nn::IncrementalState state;
  state.reserve(4);
  auto sources = batch.tokens, lengths = batch.lengths;
  for (int64_t t = 0; t < target.size(1); ++t) {
    auto step = model.decode(target.narrow(1, 0, t + 1), encoder_out, &state);
    ASSERT_EQ(step.size(1), 1) << method;
    auto rows = torch::tensor(sentence_of_row);
    auto full = model.forward(sources.index_select(0, rows), lengths.index_select(0, rows), target);
    EXPECT_LT((step.select(1, 0) - full.select(1, t)).abs().max().item<double>(), 1e-4) << method << " step " << t;
    // Beams permuted and duplicated within their sentence; at step 4 the middle sentence leaves.
    const int64_t n = static_cast<int64_t>(sentence_of_row.size()) / kBeam;
    std::vector<int64_t> order, kept;
    for (int64_t i = 0; i < n; ++i) {
      if (t == 4 && i == 1) continue;
      kept.push_back(i);
      for (int64_t b = 0; b < kBeam; ++b) order.push_back(i * kBeam + (b * b + t) % kBeam);
    }
    auto order_t = torch::tensor(order);
    if (static_cast<int64_t>(kept.size()) < n) {
      auto kept_t = torch::tensor(kept);
      state.reorder_beams(order_t, kept_t);
      encoder_out.reorder(kept_t);
      sources = sources.index_select(0, kept_t), lengths = lengths.index_select(0, kept_t);
      std::vector<int64_t> renumbered;
      for (size_t i = 0; i < kept.size(); ++i)
        for (int64_t b = 0; b < kBeam; ++b) renumbered.push_back(static_cast<int64_t>(i));
      sentence_of_row = renumbered;
    } else {
      state.reorder_beams(order_t);
    }
    target = target.index_select(0, order_t);
  }
}

bool has_parameter(models::EncoderDecoderModel& model, const std::string& prefix) {
  for (const auto& p : model.named_parameters())
    if (p.key().rfind(prefix, 0) == 0) return true;
  return false;
}

TEST(LocalityDecoding, IncrementalEqualsFullInEveryCausalMethod) {
  struct Case {
    std::string method, settings;
    bool cross;
  };
  const std::vector<Case> cases = {
      {"rel_pos", "  rel_pos:\n    clip: 3\n", true},  // the preset: every attention, decoder included
      {"neighbor",
       "  attention:\n    decoder:\n      self: [neighbor]\n  neighbor:\n    init_std: 1.5\n"
       "    decoder_layers: [0, 1]\n",
       false},
      {"local_soft",
       "  attention:\n    decoder:\n      self: [local_soft]\n      cross: [local_soft]\n"
       "  local_soft:\n    global_heads: 1\n    decoder_layers: [0, 1]\n    cross_layers: [1]\n",
       true},
      {"local_hard",
       "  attention:\n    decoder:\n      self: [local_hard]\n      cross: [local_hard]\n"
       "  local_hard:\n    window: 2\n    decoder_layers: [0, 1]\n    cross_layers: [0]\n",
       true},
      {"cnns",
       "  attention:\n    decoder:\n      self: [cnns]\n  cnns:\n    kernel_size: 3\n    conv_layers: 2\n"
       "    decoder_layers: [0, 1]\n",
       false},
  };
  for (const Case& c : cases) {
    auto model = locality_model(c.method, c.settings, 21);
    EXPECT_TRUE(has_parameter(*model, "decoder.layers.1.self_attn.chain." + c.method)) << c.method;
    if (c.cross) {
      EXPECT_TRUE(has_parameter(*model, "decoder.layers." + std::string(c.method == "local_hard" ? "0" : "1") +
                                            ".encoder_attn.chain." + c.method))
          << c.method;
    }
    expect_incremental_equals_full(*model, c.method);
  }
}

}  // namespace
