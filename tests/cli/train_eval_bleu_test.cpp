// csan-train --eval-bleu end to end: a tiny model trained briefly on the toy corpus with
// BLEU validation. Every validation BLEU in metrics.jsonl must equal what csan-generate
// (same search settings) piped into csan-score gives for the checkpoint saved after that
// validation, and checkpoint_best.pt must be the checkpoint of the best BLEU.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli_runner.h"

namespace fs = std::filesystem;
using namespace csan::testing;

namespace {

std::string describe(const RunResult& r) { return "exit " + std::to_string(r.exit_code) + "\nstderr: " + r.err; }

// The validation search settings, given to csan-train as keys and to csan-generate as flags.
const std::vector<std::pair<std::string, std::string>> kSearch = {
    {"beam", "3"}, {"max_len_a", "1.2"}, {"max_len_b", "4"}, {"lenpen", "0.8"}};

class TrainEvalBleu : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = make_temp_dir("train_eval_bleu");
    auto r = run({tool("csan-toy-corpus"), "--out-dir", dir_ + "/raw", "--train", "1500", "--valid", "40", "--test",
                  "10", "--seed", "3", "--max-words", "8"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    r = run({bin("csan-preprocess"), "--source-lang", "src", "--target-lang", "tgt", "--trainpref", dir_ + "/raw/train",
             "--validpref", dir_ + "/raw/valid", "--destdir", dir_ + "/bin", "--joined-dictionary", "--spm-vocab-size",
             "200", "--workers", "1"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    std::vector<std::string> args = {bin("csan-train"), std::string(CSAN_SOURCE_DIR) + "/recipes/tiny-transformer.yaml",
                                      "--data", dir_ + "/bin", "--save-dir", dir_ + "/ckpt", "--max-epoch", "4",
                                      "--max-tokens", "1024", "--eval-bleu", "--set", "lr_scheduler.warmup_updates=40",
                                      "--set", "checkpoint.best_checkpoint_metric=bleu", "--set",
                                      "checkpoint.keep_last_epochs=-1", "--set", "task.eval_bleu_print_samples=true"};
    for (const auto& [key, value] : kSearch) {
      args.push_back("--set");
      args.push_back("task.eval_bleu_" + key + "=" + value);
    }
    train_ = run(args);
    ASSERT_EQ(train_.exit_code, 0) << describe(train_);
  }

  // BLEU of csan-generate's translation of the validation set by `checkpoint`, scored
  // by csan-score (sacreBLEU defaults) against the references csan-generate prints.
  static double generate_and_score(const std::string& checkpoint) {
    std::vector<std::string> args = {bin("csan-generate"), "--path", checkpoint, "--data", dir_ + "/bin",
                                     "--gen-subset", "valid"};
    for (const auto& [key, value] : kSearch) {
      std::string flag = "--" + key;
      std::replace(flag.begin(), flag.end(), '_', '-');
      args.push_back(flag);
      args.push_back(value);
    }
    const auto r = run(args);
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    std::string hyps, refs;
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("T-", 0) == 0) refs += line.substr(line.find('\t') + 1) + "\n";
      if (line.rfind("D-", 0) == 0) hyps += line.substr(line.find('\t', line.find('\t') + 1) + 1) + "\n";
    }
    const std::string hyp_path = dir_ + "/hyp.txt", ref_path = dir_ + "/ref.txt";
    std::ofstream(hyp_path) << hyps;
    std::ofstream(ref_path) << refs;
    const auto score = run({bin("csan-score"), ref_path, "-i", hyp_path, "-m", "bleu", "-w", "6"});
    EXPECT_EQ(score.exit_code, 0) << describe(score);
    return nlohmann::json::parse(score.out)["score"].get<double>();
  }

  static std::vector<nlohmann::json> valid_records() {
    std::ifstream in(dir_ + "/ckpt/metrics.jsonl");
    std::vector<nlohmann::json> out;
    for (std::string line; std::getline(in, line);) {
      auto record = nlohmann::json::parse(line);
      if (record["kind"] == "valid") out.push_back(record);
    }
    return out;
  }

  static std::string dir_;
  static RunResult train_;
};

std::string TrainEvalBleu::dir_;
RunResult TrainEvalBleu::train_;

constexpr double kScoreRounding = 1e-6;  // csan-score -w 6

// One test (the training run is its set-up, and ctest runs each test in a process of
// its own), in three parts.
TEST_F(TrainEvalBleu, ValidBleuEqualsGenerateThenScoreAndSelectsTheBestCheckpoint) {
  const auto records = valid_records();
  ASSERT_EQ(records.size(), 4u);
  EXPECT_NE(train_.err.find("| bleu "), std::string::npos) << train_.err;
  EXPECT_NE(train_.err.find("example hypothesis: "), std::string::npos) << train_.err;
  EXPECT_NE(train_.err.find("example reference: "), std::string::npos) << train_.err;

  // 1. Each epoch's logged BLEU is csan-generate + csan-score on that epoch's checkpoint.
  for (const auto& record : records) {
    const int64_t epoch = record["epoch"].get<int64_t>();
    SCOPED_TRACE("epoch " + std::to_string(epoch));
    ASSERT_TRUE(record.contains("bleu")) << record.dump();
    EXPECT_NEAR(generate_and_score(dir_ + "/ckpt/checkpoint" + std::to_string(epoch) + ".pt"),
                record["bleu"].get<double>(), kScoreRounding);
  }
  // The model starts to learn in 4 short epochs (measured: 0, 0, 0.93, 1.92): BLEU rises.
  EXPECT_GT(records.back()["bleu"].get<double>(), records.front()["bleu"].get<double>()) << records.back().dump();

  // 2. best_bleu is the running maximum and checkpoint_best.pt scores it.
  double best = -1;
  for (const auto& record : records) {
    best = std::max(best, record["bleu"].get<double>());
    EXPECT_EQ(record["best_bleu"].get<double>(), best) << "best_bleu is the running maximum";
  }
  EXPECT_NEAR(generate_and_score(dir_ + "/ckpt/checkpoint_best.pt"), best, kScoreRounding);
  EXPECT_NE(train_.err.find("best valid bleu"), std::string::npos) << train_.err;

  // 3. Patience counts validations without a BLEU improvement: resumed for more epochs
  // at a learning rate too small to move a weight, BLEU cannot improve, so patience 1
  // stops the run after one more validation.
  std::vector<std::string> args = {bin("csan-train"), std::string(CSAN_SOURCE_DIR) + "/recipes/tiny-transformer.yaml",
                                   "--data", dir_ + "/bin", "--save-dir", dir_ + "/ckpt", "--max-epoch", "9",
                                   "--max-tokens", "1024", "--eval-bleu", "--set", "lr_scheduler.warmup_updates=40",
                                   "--set", "checkpoint.best_checkpoint_metric=bleu", "--lr", "1e-12", "--patience",
                                   "1"};
  for (const auto& [key, value] : kSearch) {
    args.push_back("--set");
    args.push_back("task.eval_bleu_" + key + "=" + value);
  }
  const auto resumed = run(args);
  ASSERT_EQ(resumed.exit_code, 0) << describe(resumed);
  EXPECT_NE(resumed.err.find("no improvement in 1 validations"), std::string::npos) << resumed.err;
  const auto after = valid_records();
  ASSERT_EQ(after.size(), 5u);
  EXPECT_EQ(after.back()["best_bleu"].get<double>(), best);
}

}  // namespace
