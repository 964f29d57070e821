#include <gtest/gtest.h>

#include <cmath>

#include "toolkit/core/error.h"
#include "toolkit/training/lr_scheduler.h"

namespace csan::training {
namespace {

TEST(InverseSqrt, WarmsUpLinearlyThenDecaysAsFairseq) {
  LrSchedulerSettings s;
  s.lr = 5e-4;
  s.warmup_updates = 4000;
  s.warmup_init_lr = 1e-7;
  auto sched = build_lr_scheduler("inverse_sqrt", s);
  const double step = (5e-4 - 1e-7) / 4000;
  EXPECT_DOUBLE_EQ(sched->lr_at(0), 1e-7);
  EXPECT_DOUBLE_EQ(sched->lr_at(1), 1e-7 + step);
  EXPECT_DOUBLE_EQ(sched->lr_at(2000), 1e-7 + 2000 * step);
  EXPECT_DOUBLE_EQ(sched->lr_at(3999), 1e-7 + 3999 * step);
  EXPECT_DOUBLE_EQ(sched->lr_at(4000), 5e-4 * std::sqrt(4000.0) / std::sqrt(4000.0));
  EXPECT_DOUBLE_EQ(sched->lr_at(16000), 5e-4 * std::sqrt(4000.0) / std::sqrt(16000.0));
  EXPECT_NEAR(sched->lr_at(16000), 2.5e-4, 1e-18);
  // warmup_init_lr < 0 means 0 with warm-up.
  s.warmup_init_lr = -1;
  EXPECT_DOUBLE_EQ(build_lr_scheduler("inverse_sqrt", s)->lr_at(0), 0.0);
  EXPECT_DOUBLE_EQ(build_lr_scheduler("inverse_sqrt", s)->lr_at(100), 100 * 5e-4 / 4000);
}

TEST(Fixed, ConstantWithWarmupFactor) {
  LrSchedulerSettings s;
  s.lr = 1e-3;
  auto plain = build_lr_scheduler("fixed", s);
  EXPECT_DOUBLE_EQ(plain->lr_at(0), 1e-3);
  EXPECT_DOUBLE_EQ(plain->lr_at(12345), 1e-3);
  s.warmup_updates = 10;
  auto warm = build_lr_scheduler("fixed", s);
  EXPECT_DOUBLE_EQ(warm->lr_at(0), 1e-3 * 1 / 10.0);
  EXPECT_DOUBLE_EQ(warm->lr_at(4), 1e-3 * 5 / 10.0);
  EXPECT_DOUBLE_EQ(warm->lr_at(10), 1e-3);
}

TEST(Cosine, AnnealsAndRestartsAsFairseq) {
  LrSchedulerSettings s;
  s.lr = 1e-3;
  s.min_lr = 1e-5;
  s.warmup_updates = 100;
  s.max_update = 1100;  // period 1000
  auto sched = build_lr_scheduler("cosine", s);
  EXPECT_DOUBLE_EQ(sched->lr_at(0), 1e-5);                         // warmup_init_lr defaults to min_lr
  EXPECT_DOUBLE_EQ(sched->lr_at(50), 1e-5 + 50 * (1e-3 - 1e-5) / 100);
  EXPECT_DOUBLE_EQ(sched->lr_at(100), 1e-3);
  EXPECT_NEAR(sched->lr_at(600), 1e-5 + 0.5 * (1e-3 - 1e-5), 1e-15);  // half a period: cos(pi/2) = 0
  EXPECT_NEAR(sched->lr_at(350), 1e-5 + 0.5 * (1e-3 - 1e-5) * (1 + std::cos(M_PI * 0.25)), 1e-15);
  EXPECT_NEAR(sched->lr_at(1100), 1e-4, 1e-15);  // restart, peak shrunk by 0.1
  s.t_mult = 2;
  s.period_updates = 1000;
  auto grow = build_lr_scheduler("cosine", s);
  EXPECT_NEAR(grow->lr_at(1100), 1e-4, 1e-15);  // second cycle starts after 1000 updates
  // ... and lasts 2000: half-way at 1000 into it.
  EXPECT_NEAR(grow->lr_at(2100), 1e-6 + 0.5 * (1e-4 - 1e-6), 1e-15);
}

TEST(Cosine, NeedsAPeriod) {
  LrSchedulerSettings s;
  EXPECT_THROW(build_lr_scheduler("cosine", s), Error);
}

TEST(LrScheduler, UnknownNameListsKnownOnes) {
  try {
    build_lr_scheduler("inverse_square", LrSchedulerSettings{});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cosine, fixed, inverse_sqrt"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace csan::training
