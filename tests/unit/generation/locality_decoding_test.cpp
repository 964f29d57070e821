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
    BeamMoves moves;  // the middle sentence leaves after step 4
    moves.leave_after_step = 4, moves.leaving = 1, moves.reserve = 4;
    EXPECT_LT(incremental_vs_full_with_beam_reorders(*model, random_sources(3, 31), 3, 9, {}, moves), 1e-4) << c.method;
  }
}

}  // namespace
