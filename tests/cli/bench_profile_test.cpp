// tools/bench/trace-summary on a trace this LibTorch's profiler really wrote (bench-train
// --profile, one update of the tiny Transformer on the toy corpus): the format it reads is
// the one the benchmarks write, and a training step's products are found in it. Its exact
// arithmetic and its errors are tested on hand-made traces in tests/tools/trace_summary_test.py.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_runner.h"

namespace fs = std::filesystem;
using csan::testing::make_toy_data;
using csan::testing::run;
using csan::testing::tool;
using nlohmann::json;

TEST(BenchProfile, TraceSummaryFindsTheProductsOfATrainingStepInBenchTrainsTrace) {
  const std::string data = make_toy_data("bench_profile", 64, 8, 11);
  const std::string trace = (fs::path(data).parent_path() / "trace.json").string();
  const auto trained = run({tool("bench/bench-train"), "--data", data, "--recipe",
                            std::string(CSAN_SOURCE_DIR) + "/recipes/tiny-transformer.yaml", "--warmup", "1",
                            "--updates", "1", "--profile", trace},
                           "", {"OMP_NUM_THREADS=1"});
  ASSERT_EQ(trained.exit_code, 0) << trained.err;
  const auto summary = run({"/usr/bin/python3", std::string(CSAN_SOURCE_DIR) + "/tools/bench/trace-summary", trace,
                            "--json", "--top", "1000"});
  ASSERT_EQ(summary.exit_code, 0) << summary.err;
  const json s = json::parse(summary.out);
  EXPECT_GT(s["thread_ms"].get<double>(), 0.0);
  // Forward and backward multiply: the products' share is neither nothing nor everything.
  EXPECT_GT(s["products_share"].get<double>(), 0.0);
  EXPECT_LT(s["products_share"].get<double>(), 1.0);
  const double shares =
      s["products_share"].get<double>() + s["other_ops_share"].get<double>() + s["outside_ops_share"].get<double>();
  EXPECT_NEAR(shares, 1.0, 1e-6);
  bool saw_product = false, saw_softmax = false;
  for (const auto& op : s["ops"]) {
    const std::string name = op["name"];
    saw_product |= name == "aten::mm" || name == "aten::addmm" || name == "aten::bmm";
    saw_softmax |= name.find("softmax") != std::string::npos;
    EXPECT_GT(op["calls"].get<int64_t>(), 0) << name;
  }
  EXPECT_TRUE(saw_product) << summary.out;
  EXPECT_TRUE(saw_softmax) << summary.out;
}
