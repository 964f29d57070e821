#include "toolkit/data/length_filter.h"

#include <gtest/gtest.h>

using csan::data::FilterCounts;
using csan::data::LengthFilter;
using Verdict = LengthFilter::Verdict;

namespace {

TEST(LengthFilter, InactiveKeepsEverythingIncludingEmptyLines) {
  LengthFilter f;
  EXPECT_FALSE(f.active());
  EXPECT_EQ(f.check(0, 0), Verdict::kKeep);
  EXPECT_EQ(f.check(1000, 1), Verdict::kKeep);
}

TEST(LengthFilter, MinAndMaxApplyToBothSides) {
  LengthFilter f;
  f.min_len = 1;
  f.max_len = 50;
  EXPECT_EQ(f.check(1, 50), Verdict::kKeep);
  EXPECT_EQ(f.check(0, 5), Verdict::kTooShort);
  EXPECT_EQ(f.check(5, 0), Verdict::kTooShort);
  EXPECT_EQ(f.check(51, 5), Verdict::kTooLong);
  EXPECT_EQ(f.check(5, 51), Verdict::kTooLong);
}

TEST(LengthFilter, RatioIsStrictlyGreaterInEitherDirection) {
  LengthFilter f;
  f.max_len_ratio = 1.5;
  EXPECT_EQ(f.check(10, 15), Verdict::kKeep);  // 15/10 = 1.5 is not > 1.5
  EXPECT_EQ(f.check(10, 16), Verdict::kRatio);
  EXPECT_EQ(f.check(16, 10), Verdict::kRatio);
  EXPECT_EQ(f.check(0, 3), Verdict::kRatio);  // empty against non-empty
  EXPECT_EQ(f.check(0, 0), Verdict::kKeep);
}

TEST(LengthFilter, FirstFailingRuleIsCounted) {
  LengthFilter f;
  f.min_len = 2;
  f.max_len = 10;
  f.max_len_ratio = 2;
  FilterCounts counts;
  counts.add(f.check(1, 30));  // too short beats too long and ratio
  counts.add(f.check(11, 3));  // too long beats ratio
  counts.add(f.check(9, 3));
  counts.add(f.check(4, 8));
  EXPECT_EQ(counts.too_short, 1);
  EXPECT_EQ(counts.too_long, 1);
  EXPECT_EQ(counts.ratio, 1);
  EXPECT_EQ(counts.total(), 3);
}

TEST(LengthFilter, MonolingualIgnoresRatio) {
  LengthFilter f;
  f.min_len = 1;
  f.max_len = 3;
  f.max_len_ratio = 1.0;
  EXPECT_EQ(f.check(2), Verdict::kKeep);
  EXPECT_EQ(f.check(0), Verdict::kTooShort);
  EXPECT_EQ(f.check(4), Verdict::kTooLong);
}

}  // namespace
