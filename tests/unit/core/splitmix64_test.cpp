// core::SplitMix64 is the one generator behind the toy corpus, batch shuffles and the
// fused dropout masks: its stream must be the published algorithm's, number for number,
// or every seeded corpus, batch order and mask would change.
#include "toolkit/core/splitmix64.h"

#include <gtest/gtest.h>

#include <vector>

namespace {

using csan::core::SplitMix64;

// The reference implementation's first outputs for seed 1234567 (Vigna's splitmix64.c).
TEST(SplitMix64, StreamIsTheReferenceAlgorithms) {
  SplitMix64 random(1234567);
  const std::vector<uint64_t> expected = {6457827717110365317ULL, 3203168211198807973ULL, 9817491932198370423ULL,
                                          4593380528125082431ULL, 16408922859458223821ULL};
  for (uint64_t value : expected) EXPECT_EQ(random.next(), value);
}

// The counter form that fused dropout uses: the i-th number is mix(seed + (i + 1) * increment).
TEST(SplitMix64, CounterFormEqualsTheStream) {
  const uint64_t seed = 0xfeedfacecafebeefULL;
  SplitMix64 random(seed);
  for (uint64_t i = 0; i < 100; ++i)
    EXPECT_EQ(random.next(), csan::core::splitmix64_mix(seed + (i + 1) * csan::core::kSplitMix64Increment)) << i;
}

TEST(SplitMix64, DrawsAreFunctionsOfTheNextNumber) {
  SplitMix64 a(42), b(42);
  for (int i = 0; i < 50; ++i) {
    const uint64_t x = b.next();
    EXPECT_EQ(a.unit(), static_cast<double>(x >> 11) / 9007199254740992.0);  // 2^53
  }
  // below(2^k) rejects only the top 2^k values (probability 2^(k-64)): a plain mask here.
  for (int i = 0; i < 50; ++i) EXPECT_EQ(a.below(8), b.next() & 7);
  EXPECT_TRUE(a.chance(1.0));
  EXPECT_FALSE(a.chance(0.0));
  b.next(), b.next();
  EXPECT_EQ(a.weighted({0.0, 2.0, 0.0}), 1u);
  EXPECT_EQ(a.weighted({5.0, 0.0}), 0u);
  b.next(), b.next();
  EXPECT_EQ(a.next(), b.next());  // each draw above took exactly one number
}

TEST(SplitMix64, BelowStaysInRangeAndCoversIt) {
  SplitMix64 random(7);
  std::vector<int> seen(10, 0);
  for (int i = 0; i < 10000; ++i) {
    const uint64_t x = random.below(10);
    ASSERT_LT(x, 10u);
    ++seen[x];
  }
  for (int count : seen) EXPECT_NEAR(count, 1000, 150);  // 5 binomial standard deviations
}

TEST(SplitMix64, ForksAreSeparateStreamsThatTakeOneNumber) {
  SplitMix64 parent(3), twin(3), plain(3);
  SplitMix64 one = parent.fork(1), two = twin.fork(2);
  EXPECT_NE(one.next(), two.next());
  EXPECT_EQ(SplitMix64(3).fork(1).next(), SplitMix64(3).fork(1).next());
  plain.next();
  EXPECT_EQ(parent.next(), plain.next());
}

}  // namespace
