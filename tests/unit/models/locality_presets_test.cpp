// The locality presets of CSAN's Table 1 (toolkit/models/locality_arch.cpp) and their
// recipes: the parameters each method adds to transformer_base, as csan-train counts
// them, against the paper's "Parameter" column. Four methods match it to the first
// decimal; NEIGHBOR, BLOCK and CNNs differ, for the reasons docs/architectures.md gives under
// "Where the parameters differ from Table 1" (Sperber et al.'s Gaussian has one width per head; the first
// author's BLOCK code in every encoder layer; QANet's depthwise-separable convolutions).
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstdio>

#include "tests/support/model_fixtures.h"
#include "toolkit/core/error.h"
#include "toolkit/nn/init.h"
#include "toolkit/nn/parameter_count.h"

namespace {

using namespace csan;

constexpr int64_t kPresetVocab = 8000;

int64_t parameters_of(const std::string& yaml) {
  const auto cfg = csan::testing::recipe(yaml);
  nn::SkipInitialization skip;
  return nn::count_parameters(*models::build_model(cfg, csan::testing::joined(kPresetVocab)));
}

int64_t arch_parameters(const std::string& arch) {
  return parameters_of("model:\n  arch: " + arch + "\n  share_all_embeddings: true\n");
}

// "+0.1M", as Table 1 prints a difference.
std::string millions(int64_t count) {
  char text[32];
  std::snprintf(text, sizeof text, "+%.1fM", count / 1e6);
  return text;
}

struct Row {
  std::string method;
  int64_t added;      // exact, from the method's equations
  std::string paper;  // Table 1's column
  std::string ours;   // rounded like the paper
};

// d 512, 8 heads (64 per head), 6 + 6 layers.
constexpr int64_t d = 512, H = 8, dh = 64;

std::vector<Row> table1_rows() {
  const int64_t predictor_local_soft = (d * d + d) + (d * 2 * H + 2 * H);         // 8 local heads: W_1, W_2
  const int64_t predictor_local_hard = (d * 4 * dh + 4 * dh) + (4 * dh * 4 + 4);  // 4 local heads
  const int64_t block_layer = (d * d + d) + (d * H + H) + (d * d + d) + (2 * d * d + d) + d * d;
  const int64_t conv_sublayer = d * 7 + (d * d + d) + 2 * d;  // depthwise, pointwise, layer norm
  return {
      {"bi_direct", 0, "+0.0M", "+0.0M"},
      {"rel_pos", 18 * (2 * 16) * (2 * dh), "+0.1M", "+0.1M"},  // 18 attentions x 2k rows x (a^K | a^V)
      {"neighbor", 3 * H, "+0.4M", "+0.0M"},
      {"local_hard", 3 * predictor_local_hard, "+0.4M", "+0.4M"},
      {"local_soft", 3 * predictor_local_soft, "+0.8M", "+0.8M"},
      {"block", 6 * block_layer, "+6.0M", "+7.9M"},
      {"cnns", 3 * 4 * conv_sublayer, "+42.6M", "+3.2M"},
  };
}

TEST(LocalityPresets, ParameterDeltasAtBaseSizeAgainstTable1) {
  const int64_t transformer = arch_parameters("transformer_base");
  EXPECT_EQ(transformer, 44138496 + 512 * kPresetVocab);
  for (const Row& row : table1_rows()) {
    const int64_t added = arch_parameters("locality_" + row.method + "_base") - transformer;
    EXPECT_EQ(added, row.added) << row.method;
    EXPECT_EQ(millions(added), row.ours) << row.method;
    const bool matches_paper = row.ours == row.paper;
    const bool documented_difference = row.method == "neighbor" || row.method == "block" || row.method == "cnns";
    EXPECT_NE(matches_paper, documented_difference) << row.method << ": " << millions(added) << " vs " << row.paper;
  }
}

// recipes/locality-<method>-base.yaml build the preset's model.
TEST(LocalityPresets, RecipesBuildTheirPresetsModels) {
  const int64_t transformer = arch_parameters("transformer_base");
  for (const Row& row : table1_rows()) {
    std::string file = row.method;
    for (char& c : file)
      if (c == '_') c = '-';
    const std::string path = std::string(CSAN_SOURCE_DIR) + "/recipes/locality-" + file + "-base.yaml";
    YAML::Node only_model;
    only_model["model"] = YAML::LoadFile(path)["model"];
    EXPECT_EQ(parameters_of(YAML::Dump(only_model)) - transformer, row.added) << path;
  }
}

// The tiny presets (2 + 2 layers, 4 heads) build, with the entries where the presets put them.
TEST(LocalityPresets, TinyPresetsPutEachMethodWhereTheBasePresetDoes) {
  const int64_t transformer = arch_parameters("transformer_tiny");
  const int64_t d = 64, dh = 16, heads = 4;
  EXPECT_EQ(arch_parameters("locality_bi_direct_tiny"), transformer);
  EXPECT_EQ(arch_parameters("locality_rel_pos_tiny") - transformer, 6 * 32 * 2 * dh);
  EXPECT_EQ(arch_parameters("locality_neighbor_tiny") - transformer, heads);
  EXPECT_EQ(arch_parameters("locality_local_hard_tiny") - transformer, (d * 2 * dh + 2 * dh) + (2 * dh * 2 + 2));
  EXPECT_EQ(arch_parameters("locality_local_soft_tiny") - transformer, (d * d + d) + (d * 8 + 8));
  EXPECT_EQ(arch_parameters("locality_block_tiny") - transformer,
            2 * ((d * d + d) + (d * heads + heads) + (d * d + d) + (2 * d * d + d) + d * d));
  EXPECT_EQ(arch_parameters("locality_cnns_tiny") - transformer, 4 * (d * 7 + d * d + d + 2 * d));
}

// A bad value is one line naming the key: from the recipe schema (ranges) or from the
// entry when the model is built (sizes that depend on the model).
TEST(LocalityPresets, BadValuesAreOneLineErrorsNamingTheKey) {
  struct Bad {
    std::string arch, settings, key;
  };
  const std::vector<Bad> cases = {
      {"local_hard", "  local_hard:\n    window: 0\n", "model.local_hard.window"},
      {"rel_pos", "  rel_pos:\n    clip: -2\n", "model.rel_pos.clip"},
      {"rel_pos", "  rel_pos:\n    clip: 0\n", "model.rel_pos.clip"},
      {"block", "  block:\n    size: 1025\n", "model.block.size"},  // max_source_positions 1024
      {"block", "  max_source_positions: 64\n  block:\n    size: 65\n", "model.block.size"},
      {"block", "  block:\n    size: 0\n", "model.block.size"},
      {"cnns", "  cnns:\n    kernel_size: 4\n", "model.cnns.kernel_size"},
      {"cnns", "  cnns:\n    conv_layers: 0\n", "model.cnns.conv_layers"},
      {"neighbor", "  neighbor:\n    init_std: 0\n", "model.neighbor.init_std"},
      {"bi_direct", "  bi_direct:\n    global_heads: 7\n", "model.bi_direct.global_heads"},  // 1 head left
      {"bi_direct", "  bi_direct:\n    global_heads: 1\n", "model.bi_direct.global_heads"},  // 7: odd
      {"local_soft", "  local_soft:\n    global_heads: 8\n", "model.local_soft.global_heads"},
      {"local_hard", "  local_hard:\n    global_heads: 9\n", "model.local_hard.global_heads"},
      {"local_soft", "  local_soft:\n    global_heads: -1\n", "model.local_soft.global_heads"},
      {"rel_pos", "  rel_pos:\n    encoder_layers: [0, 6]\n", "model.rel_pos.encoder_layers"},
      {"cnns", "  cnns:\n    decoder_layers: [7]\n  attention:\n    decoder:\n      self: [cnns]\n",
       "model.cnns.decoder_layers"},
      // Where a method has no form: a causal BI_DIRECT or BLOCK, NEIGHBOR across sequences.
      {"bi_direct", "  attention:\n    decoder:\n      self: [bi_direct]\n", "model.attention.decoder.self"},
      {"block", "  attention:\n    decoder:\n      self: [block]\n", "model.attention.decoder.self"},
      {"neighbor", "  attention:\n    decoder:\n      cross: [neighbor]\n", "model.attention.decoder.cross"},
      {"cnns", "  attention:\n    decoder:\n      cross: [cnns]\n", "model.attention.decoder.cross"},
  };
  for (const Bad& c : cases) {
    const std::string yaml = "model:\n  arch: locality_" + c.arch + "_base\n" + c.settings;
    try {
      parameters_of(yaml);
      ADD_FAILURE() << "no error for\n" << yaml;
    } catch (const Error& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find(c.key), std::string::npos) << message;
      EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    }
  }
}

}  // namespace
