#include "toolkit/data/lang_pairs.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <set>

#include "toolkit/core/error.h"

using namespace csan::data;

namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const csan::Error& e) {
    return e.what();
  }
  return "";
}

TEST(LangPairs, ParsesInOrderAndListsLanguagesOnce) {
  const auto pairs = parse_lang_pairs("en-de,de-en,en-fr", "lang-pairs");
  ASSERT_EQ(pairs.size(), 3u);
  EXPECT_EQ(pairs[1].src, "de");
  EXPECT_EQ(pairs[1].tgt, "en");
  EXPECT_EQ(format_lang_pairs(pairs), "en-de,de-en,en-fr");
  EXPECT_EQ(pair_languages(pairs), (std::vector<std::string>{"de", "en", "fr"}));
  EXPECT_EQ(lang_token("fr"), "__fr__");
}

TEST(LangPairs, BadListsNameTheOption) {
  for (const auto& [list, message] :
       std::vector<std::pair<std::string, std::string>>{{"", "'' is not a language pair"},
                                                        {"en-de,", "'' is not a language pair"},
                                                        {"ende", "'ende' is not a language pair"},
                                                        {"en-de-fr", "'en-de-fr' is not a language pair"},
                                                        {"en.x-de", "'en.x-de' is not a language pair"},
                                                        {"en-de,en-de", "'en-de' is given twice"},
                                                        {"en-en", "'en-en' translates a language into itself"}}) {
    const std::string error = error_of([&] { parse_lang_pairs(list, "task.lang_pairs"); });
    EXPECT_NE(error.find("task.lang_pairs"), std::string::npos) << list << ": " << error;
    EXPECT_NE(error.find(message), std::string::npos) << list << ": " << error;
  }
}

TEST(TemperatureSampling, RatiosByFormula) {
  // p_i ~ (n_i / N)^(1/T): T = 1 follows the data; sizes 16:1 at T = 2 give 4:1, sizes
  // 81:1 at T = 4 give 3:1.
  auto r = temperature_sampling_ratios({800, 200}, 1.0, "t");
  EXPECT_DOUBLE_EQ(r[0], 0.8);
  EXPECT_DOUBLE_EQ(r[1], 0.2);
  r = temperature_sampling_ratios({1600, 100}, 2.0, "t");
  EXPECT_DOUBLE_EQ(r[0], 0.8);
  EXPECT_DOUBLE_EQ(r[1], 0.2);
  r = temperature_sampling_ratios({8100, 100}, 4.0, "t");
  EXPECT_DOUBLE_EQ(r[0], 0.75);
  EXPECT_DOUBLE_EQ(r[1], 0.25);
  // T < 1 sharpens: 3:1 at T = 0.5 gives 9:1.
  r = temperature_sampling_ratios({300, 100}, 0.5, "t");
  EXPECT_DOUBLE_EQ(r[0], 0.9);
  EXPECT_DOUBLE_EQ(r[1], 0.1);
}

TEST(TemperatureSampling, TemperatureMustBePositive) {
  for (double t : {0.0, -1.0, std::nan("")})
    EXPECT_NE(error_of([&] {
                temperature_sampling_ratios({1, 2}, t, "task.sampling_temperature");
              }).find("key 'task.sampling_temperature': must be a number > 0"),
              std::string::npos)
        << t;
  EXPECT_NE(error_of([&] {
              temperature_sampling_ratios({0, 0}, 1.0, "t");
            }).find("no training data"),
            std::string::npos);
}

TEST(TemperatureSampling, EpochSizeAsFairseq) {
  // The largest dataset keeps its size; the other gets ratio / largest ratio of it.
  EXPECT_EQ(sampled_counts({1600, 100}, {0.8, 0.2}), (std::vector<int64_t>{1600, 400}));
  EXPECT_EQ(sampled_counts({1600, 100}, temperature_sampling_ratios({1600, 100}, 1.0, "t")),
            (std::vector<int64_t>{1600, 100}));
  // At most 1.5 times the data: 1010 * 1.5 = 1515.
  const auto capped = sampled_counts({1000, 10}, {0.5, 0.5});
  EXPECT_EQ(capped[0] + capped[1], 1515);
  EXPECT_EQ(capped, (std::vector<int64_t>{758, 757}));
}

TEST(TemperatureSampling, IndicesRepeatWholeDataThenSampleTheRest) {
  const auto indices = sample_indices(5, 12, 7);
  ASSERT_EQ(indices.size(), 12u);
  std::map<int64_t, int> seen;
  for (int64_t i : indices) ++seen[i];
  int thrice = 0;
  for (const auto& [i, n] : seen) {
    EXPECT_TRUE(n == 2 || n == 3) << i;
    thrice += n == 3;
  }
  EXPECT_EQ(thrice, 2);
  EXPECT_EQ(sample_indices(5, 12, 7), indices);  // seeded
  const auto fewer = sample_indices(100, 10, 1);
  EXPECT_EQ(std::set<int64_t>(fewer.begin(), fewer.end()).size(), 10u);  // without replacement
}

}  // namespace
