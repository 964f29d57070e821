// csan-train --precision end to end on the toy corpus: bf16 (autocast) converges like
// fp32 after the same updates, resumes exactly, and fp16/amp without CUDA are one clear
// error line suggesting bf16.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_runner.h"

using namespace csan::testing;

namespace {

const std::string& data_dir() {
  static const std::string dir = make_toy_data("train_precision_data", 300, 30, 4);
  return dir;
}

RunResult train(const std::string& save_dir, const std::string& precision, int max_update,
                std::vector<std::string> extra = {}) {
  std::vector<std::string> args{bin("csan-train"), std::string(CSAN_SOURCE_DIR) + "/recipes/tiny-transformer.yaml",
                                "--data",          data_dir(),
                                "--save-dir",      save_dir,
                                "--precision",     precision,
                                "--max-update",    std::to_string(max_update),
                                "--max-tokens",    "1024",
                                "--log-interval",  "1",
                                "--set",           "optimization.max_epoch=0",
                                "--set",           "lr_scheduler.warmup_updates=20"};
  args.insert(args.end(), extra.begin(), extra.end());
  return run(args);
}

std::vector<nlohmann::json> records(const std::string& save_dir, const std::string& kind) {
  std::ifstream in(save_dir + "/metrics.jsonl");
  std::vector<nlohmann::json> out;
  for (std::string line; std::getline(in, line);) {
    auto rec = nlohmann::json::parse(line);
    if (rec["kind"] == kind) out.push_back(rec);
  }
  return out;
}

// Stated bound: after the same 150 updates from the same initial weights and batches,
// the bf16 run's validation loss is within 5% of the fp32 run's.
TEST(TrainPrecision, Bf16ConvergesLikeFp32AfterTheSameUpdates) {
  const std::string fp32 = make_temp_dir("prec_fp32"), bf16 = make_temp_dir("prec_bf16");
  auto a = train(fp32, "fp32", 150);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  auto b = train(bf16, "bf16", 150);
  ASSERT_EQ(b.exit_code, 0) << b.err;
  const auto va = records(fp32, "valid"), vb = records(bf16, "valid");
  ASSERT_FALSE(va.empty());
  ASSERT_FALSE(vb.empty());
  EXPECT_EQ(vb.back()["update"], 150);
  const double loss32 = va.back()["loss"].get<double>(), loss16 = vb.back()["loss"].get<double>();
  const double first_train = records(bf16, "train").front()["loss"].get<double>();
  EXPECT_LT(loss16, 0.7 * first_train) << "bf16 training should learn (first train loss " << first_train << ")";
  EXPECT_NEAR(loss16, loss32, 0.05 * loss32) << "fp32 " << loss32 << " bf16 " << loss16;
  EXPECT_NE(loss16, loss32) << "bf16 should run different arithmetic than fp32";
  // No loss scaling in bf16: no scale in the log.
  EXPECT_FALSE(records(bf16, "train").back().contains("loss_scale"));
  EXPECT_EQ(b.err.find("loss_scale"), std::string::npos) << b.err;
}

// A bf16 run stopped after 20 updates and resumed logs exactly the same losses for
// updates 21..40 and the same final validation as an uninterrupted run.
TEST(TrainPrecision, Bf16RunResumesExactly) {
  const std::string full = make_temp_dir("prec_full"), split = make_temp_dir("prec_split");
  auto r = train(full, "bf16", 40);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = train(split, "bf16", 20);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = train(split, "bf16", 40);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("resumed from"), std::string::npos) << r.err;
  auto full_train = records(full, "train"), split_train = records(split, "train");
  ASSERT_EQ(full_train.size(), 40u);
  ASSERT_EQ(split_train.size(), 40u);
  for (size_t i = 20; i < 40; ++i) {
    EXPECT_EQ(split_train[i]["update"], full_train[i]["update"]);
    EXPECT_EQ(split_train[i]["loss"].get<double>(), full_train[i]["loss"].get<double>()) << "update " << i + 1;
  }
  EXPECT_EQ(records(split, "valid").back()["loss"].get<double>(), records(full, "valid").back()["loss"].get<double>());
}

TEST(TrainPrecision, Fp16AndAmpWithoutCudaAreOneLineErrorsSuggestingBf16) {
  for (const char* precision : {"fp16", "amp"}) {
    const std::string save = make_temp_dir("prec_fp16");
    auto r = train(save, precision, 5);
    EXPECT_EQ(r.exit_code, 1) << precision;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find("CUDA"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("--precision bf16"), std::string::npos) << r.err;
  }
  auto r = train(make_temp_dir("prec_bad"), "fp8", 5);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("common.precision"), std::string::npos) << r.err;
}

}  // namespace
