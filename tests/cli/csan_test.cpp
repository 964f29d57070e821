// CSAN end to end: toy corpus -> csan-preprocess -> csan-train with a tiny 2-D CSAN
// recipe for a few dozen updates -> csan-generate from the checkpoint alone. Also: the
// resolved recipe carries the CSAN settings, and a bad CSAN key is a one-line error.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_runner.h"

namespace fs = std::filesystem;
using csan::testing::bin;
using csan::testing::run;
using csan::testing::RunResult;
using csan::testing::tool;

namespace {

void spit(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

size_t count_lines(const std::string& text) { return std::count(text.begin(), text.end(), '\n'); }

std::string describe(const RunResult& r) { return "exit " + std::to_string(r.exit_code) + "\nstderr: " + r.err; }

const char* kRecipe =
    "model:\n  arch: csan2d_tiny\n  share_all_embeddings: true\n  dropout: 0.1\n"
    "  csan:\n    window: 5\n    head_boundary: wrap\n    encoder_layers: [0, 1]\n    decoder_layers: [0]\n"
    "optimization:\n  lr: 0.003\n  max_update: 40\n  clip_norm: 1.0\n"
    "optimizer:\n  adam_betas: [0.9, 0.98]\n"
    "lr_scheduler:\n  warmup_updates: 10\n"
    "criterion:\n  label_smoothing: 0.1\n"
    "dataset:\n  max_tokens: 1024\n"
    "common:\n  log_interval: 10\n";

class CsanCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = csan::testing::make_temp_dir("csan_cli");
    const std::string raw = dir_ + "/raw";
    auto corpus = run({tool("csan-toy-corpus"), "--out-dir", raw, "--train", "1000", "--valid", "50", "--test", "40",
                       "--seed", "3", "--max-words", "10"});
    ASSERT_EQ(corpus.exit_code, 0) << describe(corpus);
    auto preprocess = run({bin("csan-preprocess"), "--source-lang", "src", "--target-lang", "tgt", "--trainpref",
                           raw + "/train", "--validpref", raw + "/valid", "--testpref", raw + "/test", "--destdir",
                           dir_ + "/bin", "--joined-dictionary", "--spm-vocab-size", "200", "--workers", "1"});
    ASSERT_EQ(preprocess.exit_code, 0) << describe(preprocess);
    spit(dir_ + "/recipe.yaml", kRecipe);
  }
  static std::string dir_;
};

std::string CsanCli::dir_;

TEST_F(CsanCli, TrainsAndDecodesThroughTheExecutables) {
  auto train = run({bin("csan-train"), dir_ + "/recipe.yaml", "--data", dir_ + "/bin", "--save-dir", dir_ + "/ckpt"});
  ASSERT_EQ(train.exit_code, 0) << describe(train);
  const std::string checkpoint = dir_ + "/ckpt/checkpoint_last.pt";
  ASSERT_TRUE(fs::exists(checkpoint)) << train.err;
  // It learns: the training loss of the last logged interval is below the first's.
  std::vector<double> losses;
  std::ifstream metrics(dir_ + "/ckpt/metrics.jsonl");
  for (std::string line; std::getline(metrics, line);) {
    auto record = nlohmann::json::parse(line);
    if (record["kind"] == "train") losses.push_back(record["loss"].get<double>());
  }
  ASSERT_GE(losses.size(), 2u);
  EXPECT_LT(losses.back(), losses.front() - 0.5);
  auto generate = run({bin("csan-generate"), "--path", checkpoint, "--data", dir_ + "/bin", "--gen-subset", "test",
                       "--beam", "3", "--output-format", "plain"});
  ASSERT_EQ(generate.exit_code, 0) << describe(generate);
  EXPECT_EQ(count_lines(generate.out), 40u);
  // One sentence per batch (no padding beside the windows) decodes the same.
  auto single = run({bin("csan-generate"), "--path", checkpoint, "--data", dir_ + "/bin", "--gen-subset", "test",
                     "--beam", "3", "--output-format", "plain", "--batch-size", "1", "--max-tokens", "0"});
  ASSERT_EQ(single.exit_code, 0) << describe(single);
  EXPECT_EQ(single.out, generate.out);
}

TEST_F(CsanCli, ResolvedRecipeCarriesTheCsanSettings) {
  auto r = run({bin("csan-train"), dir_ + "/recipe.yaml", "--data", dir_ + "/bin", "--save-dir", dir_ + "/unused",
                "--set", "model.csan.head_boundary=authors", "--print-recipe"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  for (const char* expected : {"arch: csan2d_tiny", "head_window: 3", "head_boundary: authors", "window: 5"})
    EXPECT_NE(r.out.find(expected), std::string::npos) << expected << "\n" << r.out;
}

TEST_F(CsanCli, BadCsanSettingIsAOneLineErrorNamingTheKey) {
  for (const std::string set : {"model.csan.window=10", "model.csan.encoder_layers=[0,4]", "model.csan.head_boundary=x"}) {
    auto r = run({bin("csan-train"), dir_ + "/recipe.yaml", "--data", dir_ + "/bin", "--save-dir", dir_ + "/bad",
                  "--set", set, "--max-update", "1"});
    EXPECT_NE(r.exit_code, 0) << set;
    EXPECT_EQ(count_lines(r.err), 1u) << set << ": " << r.err;
    EXPECT_NE(r.err.find(set.substr(0, set.find('='))), std::string::npos) << r.err;
  }
}

}  // namespace
