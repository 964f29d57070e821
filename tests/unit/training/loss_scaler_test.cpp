// The dynamic loss scaler's state machine, step by step against fairseq's semantics.
#include "toolkit/training/loss_scaler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <sstream>

#include "toolkit/core/error.h"

namespace csan::training {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

LossScalerOptions options(double init, int64_t window) {
  LossScalerOptions o;
  o.init_scale = init;
  o.scale_window = window;
  return o;
}

TEST(DynamicLossScaler, OverflowHalvesTheScaleAndAsksToSkip) {
  DynamicLossScaler scaler(options(128, 100));
  EXPECT_FALSE(scaler.check_overflow(3.5));
  EXPECT_EQ(scaler.loss_scale(), 128);
  EXPECT_TRUE(scaler.check_overflow(kInf));
  EXPECT_EQ(scaler.loss_scale(), 64);
  EXPECT_TRUE(scaler.check_overflow(std::nan("")));
  EXPECT_EQ(scaler.loss_scale(), 32);
  EXPECT_TRUE(scaler.check_overflow(-kInf));
  EXPECT_EQ(scaler.loss_scale(), 16);
}

TEST(DynamicLossScaler, DoublesAfterScaleWindowCleanUpdates) {
  DynamicLossScaler scaler(options(128, 3));
  scaler.update();
  scaler.update();
  EXPECT_EQ(scaler.loss_scale(), 128);
  scaler.update();  // third clean update
  EXPECT_EQ(scaler.loss_scale(), 256);
  EXPECT_TRUE(scaler.check_overflow(kInf));
  EXPECT_EQ(scaler.loss_scale(), 128);
  // The window restarts at the overflow: two clean updates are not enough.
  scaler.update();
  scaler.update();
  EXPECT_EQ(scaler.loss_scale(), 128);
  scaler.update();
  EXPECT_EQ(scaler.loss_scale(), 256);
  for (int i = 0; i < 3; ++i) scaler.update();
  EXPECT_EQ(scaler.loss_scale(), 512);
}

TEST(DynamicLossScaler, ToleranceDelaysHalvingUntilTheOverflowShareReachesIt) {
  auto o = options(128, 1000);
  o.tolerance = 0.5;
  DynamicLossScaler scaler(o);
  for (int i = 0; i < 3; ++i) scaler.update();
  // 1 overflow in 4 iterations since the (initial) rescale: 0.25 < 0.5, skipped but kept.
  EXPECT_TRUE(scaler.check_overflow(kInf));
  EXPECT_EQ(scaler.loss_scale(), 128);
  EXPECT_TRUE(scaler.check_overflow(kInf));  // 2 / 5
  EXPECT_EQ(scaler.loss_scale(), 128);
  EXPECT_TRUE(scaler.check_overflow(kInf));  // 3 / 6 = 0.5: halve, counters restart
  EXPECT_EQ(scaler.loss_scale(), 64);
  EXPECT_TRUE(scaler.check_overflow(kInf));  // 1 / 1
  EXPECT_EQ(scaler.loss_scale(), 32);
}

TEST(DynamicLossScaler, ThresholdIsAFloor) {
  auto o = options(128, 1000);
  o.threshold = 50.0;
  DynamicLossScaler scaler(o);
  scaler.check_overflow(kInf);
  EXPECT_EQ(scaler.loss_scale(), 64);
  scaler.check_overflow(kInf);
  EXPECT_EQ(scaler.loss_scale(), 50);
  scaler.check_overflow(kInf);
  EXPECT_EQ(scaler.loss_scale(), 50);
}

TEST(DynamicLossScaler, ReachingTheMinimumIsAClearErrorAndKeepsTheScale) {
  auto o = options(1, 1000);
  o.min_loss_scale = 0.25;
  DynamicLossScaler scaler(o);
  EXPECT_TRUE(scaler.check_overflow(kInf));
  EXPECT_EQ(scaler.loss_scale(), 0.5);
  try {
    scaler.check_overflow(kInf);
    FAIL() << "expected an error at the minimum loss scale";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("minimum loss scale reached (0.25)"), std::string::npos) << what;
    EXPECT_NE(what.find("lower the learning rate"), std::string::npos) << what;
    EXPECT_NE(what.find("bf16"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
  EXPECT_EQ(scaler.loss_scale(), 0.5);
}

TEST(DynamicLossScaler, BadOptionsNameTheirKey) {
  EXPECT_THROW(DynamicLossScaler(options(128, 0)), Error);
  EXPECT_THROW(DynamicLossScaler(options(0, 10)), Error);
}

// A saved and restored scaler continues exactly like the original (counters included,
// not only the scale).
TEST(DynamicLossScaler, SaveLoadRoundTripContinuesIdentically) {
  auto o = options(128, 4);
  o.tolerance = 0.3;
  DynamicLossScaler original(o);
  original.update();
  original.check_overflow(kInf);  // 1/2 >= 0.3: halves
  original.update();
  original.update();
  original.check_overflow(kInf);  // 1/3 >= 0.3: halves
  original.update();

  checkpoint::SectionWriter out;
  original.save(out);
  DynamicLossScaler restored(options(7, 4));
  ASSERT_TRUE(restored.load(checkpoint::SectionReader::of(out, "test")));
  EXPECT_EQ(restored.loss_scale(), original.loss_scale());

  // Same future: the doubling happens on the same update for both.
  for (int i = 0; i < 9; ++i) {
    const bool overflow = i == 5;
    EXPECT_EQ(original.check_overflow(overflow ? kInf : 1.0), restored.check_overflow(overflow ? kInf : 1.0));
    if (!overflow) {
      original.update();
      restored.update();
    }
    EXPECT_EQ(restored.loss_scale(), original.loss_scale()) << "update " << i;
  }
  // ... while a scaler with the same scale but fresh counters would diverge.
  DynamicLossScaler fresh(options(32, 4));
  DynamicLossScaler replay(o);
  replay.update();
  replay.check_overflow(kInf);
  replay.update();
  replay.update();
  replay.check_overflow(kInf);
  replay.update();
  ASSERT_EQ(fresh.loss_scale(), replay.loss_scale());
  for (int i = 0; i < 3; ++i) {
    fresh.update();
    replay.update();
  }
  EXPECT_NE(fresh.loss_scale(), replay.loss_scale());
}

TEST(DynamicLossScaler, LoadFromASectionWithoutScalerStateKeepsTheState) {
  checkpoint::SectionWriter out;
  out.write("unrelated", torch::ones({1}));
  DynamicLossScaler scaler(options(128, 10));
  EXPECT_FALSE(scaler.load(checkpoint::SectionReader::of(out, "test")));
  EXPECT_EQ(scaler.loss_scale(), 128);
}

}  // namespace
}  // namespace csan::training
