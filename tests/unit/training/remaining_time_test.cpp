#include "toolkit/training/remaining_time.h"

#include <gtest/gtest.h>

using csan::training::RemainingTime;

TEST(RemainingTime, NothingUntilUpdatesHaveBeenTimed) {
  RemainingTime eta;
  EXPECT_EQ(eta.seconds_left(100), std::nullopt);
  eta.observe(0.0, 0);
  EXPECT_EQ(eta.seconds_left(100), std::nullopt);
  eta.observe(5.0, 0);  // a validation before any update
  EXPECT_EQ(eta.seconds_left(100), std::nullopt);
  eta.observe(15.0, 10);
  ASSERT_TRUE(eta.seconds_left(100).has_value());
  EXPECT_DOUBLE_EQ(*eta.seconds_left(100), 1.5 * 90);
  EXPECT_DOUBLE_EQ(*eta.seconds_left(5), 0.0) << "past max_update: nothing left";
  EXPECT_DOUBLE_EQ(*eta.seconds_left(100, 40), 1.5 * 60) << "from a later update, at the same pace";
}

// A pause counts while it is among the recent intervals and is forgotten after them: the
// whole-run average would still carry it.
TEST(RemainingTime, APauseIsForgottenOnceItLeavesTheWindow) {
  RemainingTime eta(4);
  double t = 0;
  int64_t update = 0;
  eta.observe(t, update);
  auto interval = [&](double seconds) {
    t += seconds;
    update += 10;
    eta.observe(t, update);
  };
  for (int i = 0; i < 5; ++i) interval(10.0);  // 1 s per update
  EXPECT_DOUBLE_EQ(*eta.seconds_left(1000), 950.0);
  interval(10.0 + 1800.0);  // stopped for half an hour
  EXPECT_GT(*eta.seconds_left(1000), 10000.0);
  for (int i = 0; i < 3; ++i) interval(10.0);
  EXPECT_GT(*eta.seconds_left(1000), 5000.0) << "still within the last 4 intervals";
  interval(10.0);
  EXPECT_DOUBLE_EQ(*eta.seconds_left(1000), 1000.0 - update);
}
