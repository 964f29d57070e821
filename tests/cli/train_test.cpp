// csan-train end to end: toy corpus -> csan-preprocess -> csan-train with the tiny
// recipe. Checks the files a run leaves, that the loss falls, and that every bad input
// (recipe keys, types, ranges, options, data, checkpoints) is one clear error line.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_runner.h"

namespace fs = std::filesystem;
using namespace csan::testing;

namespace {

const std::string& data_dir() {
  static const std::string dir = make_toy_data("train_data", 300, 30, 4);
  return dir;
}

std::string recipe(const std::string& name) { return std::string(CSAN_SOURCE_DIR) + "/recipes/" + name; }

RunResult train(std::vector<std::string> args) {
  args.insert(args.begin(), bin("csan-train"));
  return run(args);
}

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = make_temp_dir("train_recipes") + "/" + name;
  std::ofstream(path) << text;
  return path;
}

size_t count_lines(const std::string& s) { return std::count(s.begin(), s.end(), '\n'); }

std::vector<nlohmann::json> metrics(const std::string& save_dir) {
  std::ifstream in(save_dir + "/metrics.jsonl");
  std::vector<nlohmann::json> out;
  for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

TEST(Train, TinyTransformerLearnsTheToyCorpusAndWritesCheckpoints) {
  const std::string save = make_temp_dir("train_tiny");
  auto r = train({recipe("tiny-transformer.yaml"), "--data", data_dir(), "--save-dir", save, "--max-epoch", "6",
                  "--max-tokens", "1024", "--log-interval", "5", "--set", "lr_scheduler.warmup_updates=20", "--set",
                  "checkpoint.keep_last_epochs=2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("parameters"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("valid on 'valid'"), std::string::npos) << r.err;
  for (const char* f : {"checkpoint_last.pt", "checkpoint_best.pt", "checkpoint6.pt", "checkpoint5.pt"})
    EXPECT_TRUE(fs::exists(save + "/" + f)) << f;
  EXPECT_FALSE(fs::exists(save + "/checkpoint4.pt")) << "keep_last_epochs=2 keeps only two epoch checkpoints";
  for (const auto& entry : fs::directory_iterator(save))
    EXPECT_EQ(entry.path().string().find(".tmp"), std::string::npos) << "left-over temporary " << entry.path();

  // The JSON log has train and validation records; the loss falls well below its start.
  auto records = metrics(save);
  double first_train = -1, last_valid = -1, first_valid = -1;
  int valid_records = 0;
  for (const auto& rec : records) {
    if (rec["kind"] == "train" && first_train < 0) first_train = rec["loss"].get<double>();
    if (rec["kind"] == "train") {
      // The process's memory is logged for plotting its growth: LibTorch alone holds more
      // than 10 MiB, and the peak is never below the present.
      EXPECT_GT(rec["rss_mib"].get<double>(), 10.0) << rec;
      EXPECT_GE(rec["peak_rss_mib"].get<double>(), rec["rss_mib"].get<double>() - 1.0) << rec;
    }
    if (rec["kind"] == "valid") {
      if (first_valid < 0) first_valid = rec["loss"].get<double>();
      last_valid = rec["loss"].get<double>();
      ++valid_records;
    }
  }
  EXPECT_EQ(valid_records, 6);
  ASSERT_GT(first_train, 0);
  // A uniform guess over the ~200-type vocabulary costs ~7.6 bits; after 6 short
  // epochs the model is far below that and below its own first validation.
  EXPECT_LT(last_valid, 5.5) << "first train loss " << first_train;
  EXPECT_LT(last_valid, first_valid);
}

TEST(Train, UnknownRecipeKeyNamesItAndSuggests) {
  auto path = write_temp("typo.yaml", "model:\n  arch: transformer_tiny\noptimization:\n  lrr: 0.1\n");
  auto r = train({path, "--data", data_dir(), "--save-dir", make_temp_dir("train_typo")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(count_lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("optimization.lrr"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("optimization.lr"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("typo.yaml"), std::string::npos) << r.err;
}

TEST(Train, WrongTypeAndOutOfRangeOverridesNameTheKey) {
  auto r = train({recipe("tiny-transformer.yaml"), "--data", data_dir(), "--set", "optimization.max_update=many"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(count_lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("optimization.max_update"), std::string::npos) << r.err;

  r = train({recipe("tiny-transformer.yaml"), "--data", data_dir(), "--set", "optimization.update_freq=0"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("optimization.update_freq"), std::string::npos) << r.err;

  r = train({recipe("tiny-transformer.yaml"), "--data", data_dir(), "--set", "lr_scheduler.name=inverse_square"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("inverse_sqrt"), std::string::npos) << r.err;
}

TEST(Train, BadOptionsAndInputsAreOneLineErrors) {
  struct Case {
    std::vector<std::string> args;
    std::string expect;
  };
  const std::string save = make_temp_dir("train_bad");
  const std::vector<Case> cases = {
      {{recipe("tiny-transformer.yaml"), "--data", data_dir(), "--bogus"}, "bogus"},
      {{recipe("tiny-transformer.yaml")}, "--data"},
      {{}, "RECIPE"},
      {{recipe("nope.yaml"), "--data", data_dir()}, "nope.yaml"},
      {{recipe("tiny-transformer.yaml"), "--data", save + "/missing", "--save-dir", save}, "missing"},
      {{recipe("tiny-transformer.yaml"), "--data", data_dir(), "--save-dir", save, "--set",
        "checkpoint.best_checkpoint_metric=bleu"},
       "task.eval_bleu"},
      {{recipe("tiny-transformer.yaml"), "--data", data_dir(), "--save-dir", save, "--eval-bleu", "--set",
        "task.eval_bleu_beam=0"},
       "task.eval_bleu_beam"},
      {{recipe("tiny-transformer.yaml"), "--data", data_dir(), "--save-dir", save, "--restore-file",
        save + "/absent.pt"},
       "absent.pt"},
  };
  for (const auto& c : cases) {
    auto r = train(c.args);
    EXPECT_EQ(r.exit_code, 1) << c.expect << ": " << r.err;
    EXPECT_EQ(count_lines(r.err), 1u) << r.err;
    EXPECT_NE(r.err.find(c.expect), std::string::npos) << r.err;
  }
}

TEST(Train, CorruptCheckpointToResumeFromIsAClearError) {
  const std::string save = make_temp_dir("train_corrupt");
  { std::ofstream(save + "/checkpoint_last.pt") << "PK\x03\x04 not really a checkpoint"; }
  auto r = train({recipe("tiny-transformer.yaml"), "--data", data_dir(), "--save-dir", save, "--max-update", "1"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(count_lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("checkpoint_last.pt"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("corrupt"), std::string::npos) << r.err;
}

TEST(Train, PrintRecipeShowsResolvedKeysAndRoundTrips) {
  auto r = train({recipe("tiny-transformer.yaml"), "--print-recipe", "--lr", "0.002", "--max-update", "7", "--cpu"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("lr: 0.002"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cpu: true"), std::string::npos) << r.out;  // common.cpu
  EXPECT_NE(r.out.find("max_update: 7"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("embed_dim"), std::string::npos) << r.out;  // preset filled in
  auto again = train({write_temp("resolved.yaml", r.out), "--print-recipe"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.out, r.out);
}

}  // namespace
