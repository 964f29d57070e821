#include "toolkit/core/progress.h"

#include <gtest/gtest.h>

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
