#include "toolkit/core/progress.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>

#include "toolkit/core/atomic_file.h"
#include "toolkit/core/error.h"

using csan::remaining_seconds;

TEST(Progress, RemainingTimeCountsFromTheFirstCountSeen) {
  EXPECT_EQ(remaining_seconds(0.0, 0, 0, 100), std::nullopt);
  EXPECT_DOUBLE_EQ(*remaining_seconds(10.0, 0, 10, 100), 90.0);
  // A run resumed at update 3,000 of 4,000 that made 10 updates in 20 s has 1,980 s left,
  // not the 6.6 s that 20 s for 3,010 updates would say.
  EXPECT_DOUBLE_EQ(*remaining_seconds(20.0, 3000, 3010, 4000), 2.0 * 990);
  EXPECT_DOUBLE_EQ(*remaining_seconds(5.0, 0, 120, 100), 0.0) << "past the total";
  EXPECT_EQ(remaining_seconds(5.0, 10, 10, 100), std::nullopt);
  EXPECT_EQ(remaining_seconds(5.0, 0, 10, 0), std::nullopt) << "unknown total";
}

// metrics.jsonl's records: sorted keys, Python's separators, numbers that read back as
// the same doubles, no NaN (JSON has none), appended line by line.
TEST(JsonLinesWriter, OneSortedRecordPerLine) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("csan_json_lines_" + std::to_string(::getpid()) + ".jsonl")).string();
  std::filesystem::remove(path);
  {
    csan::JsonLinesWriter writer(path, /*append=*/true);
    writer.write({{"update", 10LL}, {"loss", 2.0 / 3}, {"kind", std::string("train \"x\"")}, {"gnorm", NAN}});
  }
  {
    csan::JsonLinesWriter writer(path, /*append=*/true);
    writer.write({{"lr", 0.0005}, {"scale", 128.0}});
  }
  EXPECT_EQ(csan::read_file(path),
            "{\"gnorm\": null, \"kind\": \"train \\\"x\\\"\", \"loss\": 0.6666666666666666, \"update\": 10}\n"
            "{\"lr\": 0.0005, \"scale\": 128.0}\n");
  std::filesystem::remove(path);
  EXPECT_THROW(csan::JsonLinesWriter("/nonexistent-dir/m.jsonl"), csan::Error);
}
