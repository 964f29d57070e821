// The decoder state beam search runs on: per-sentence encoder keys/values shared by the
// beams, self-attention caches written in place, reordered within sentences and shrunk
// when sentences leave. Every step must equal a full recomputation of the prefix.
#include <gtest/gtest.h>

#include "tiny_model.h"
#include "toolkit/nn/incremental_state.h"

namespace {

using namespace csan;
using namespace csan::generation::testing;

TEST(IncrementalState, AppendsInPlaceWithinTheReserveAndGrowsPastIt) {
  nn::IncrementalState state;
  state.reserve(4);
  auto a = torch::randn({3, 2, 1, 5}), b = torch::randn({3, 2, 2, 5}), c = torch::randn({3, 2, 3, 5});
  state.append("k", a);
  const void* storage = state.history("k").positions.data_ptr();
  state.append("k", b);
  EXPECT_EQ(state.history("k").positions.data_ptr(), storage) << "no copy of the prefix while within the reserve";
  EXPECT_TRUE(torch::equal(state.at("k"), torch::cat({a, b}, 2)));
  state.append("k", c);  // 6 > 4 positions: reallocated, content kept
  EXPECT_TRUE(torch::equal(state.at("k"), torch::cat({a, b, c}, 2)));
  EXPECT_EQ(state.length("k"), 6);
  EXPECT_EQ(state.length("absent"), 0);
}

TEST(IncrementalState, BeamReorderRewritesTheHistoryNotTheCachesAndLeavesPerSentenceEntriesUntilSentencesLeave) {
  nn::IncrementalState state;
  auto rows = torch::randn({4, 2, 3, 5}), per_sentence = torch::randn({2, 2, 7, 5});
  state.append("self", rows);
  state.set("cross", per_sentence);
  const void* storage = state.history("self").positions.data_ptr();
  auto order = torch::tensor(std::vector<int64_t>{1, 1, 3, 2});  // beams stay in their sentence
  state.reorder_beams(order);
  EXPECT_TRUE(torch::equal(state.at("self"), rows.index_select(0, order)));
  EXPECT_TRUE(torch::equal(state.history("self").rows_at, order.unsqueeze(1).expand({4, 3})));
  EXPECT_EQ(state.history("self").positions.data_ptr(), storage) << "reordering moves no cached keys";
  EXPECT_TRUE(state.at("cross").is_same(per_sentence)) << "encoder-side state is not copied";
  // A new position, then a second reorder: each row's history follows its own chain.
  auto fourth = torch::randn({4, 2, 1, 5});
  state.append("self", fourth);
  auto expected = torch::cat({rows.index_select(0, order), fourth}, 2);
  auto order2 = torch::tensor(std::vector<int64_t>{0, 0, 2, 3});
  state.reorder_beams(order2);
  expected = expected.index_select(0, order2);
  EXPECT_TRUE(torch::equal(state.at("self"), expected));
  // Sentence 0 leaves; its rows go.
  auto keep = torch::tensor(std::vector<int64_t>{3, 2});
  state.reorder_beams(keep, torch::tensor(std::vector<int64_t>{1}));
  expected = expected.index_select(0, keep);
  EXPECT_TRUE(torch::equal(state.at("self"), expected));
  EXPECT_TRUE(torch::equal(state.at("cross"), per_sentence.narrow(0, 1, 1)));
  // Appending after a shrink writes the remaining rows only.
  auto more = torch::randn({2, 2, 1, 5});
  state.append("self", more);
  EXPECT_TRUE(torch::equal(state.at("self"), torch::cat({expected, more}, 2)));
  EXPECT_EQ(state.length("self"), 5);
  EXPECT_THROW(state.append("self", torch::randn({3, 2, 1, 5})), c10::Error);  // rows must match
}

// Beams share their sentence's encoder output (one row per sentence) while every beam
// has its own prefix; the result must equal decoding each row with its own copy of the
// encoder output, step by step, across beam reorders and a sentence leaving the batch.
TEST(IncrementalDecoding, BeamsSharingEncoderStateEqualFullRecomputation) {
  torch::NoGradGuard no_grad;
  auto model = tiny_model(21);
  auto batch = random_sources(3, 31);  // padded: sentences of different lengths
  constexpr int64_t kBeam = 4;
  auto encoder_out = model->encode_tokens(batch.tokens, batch.lengths);
  std::vector<int64_t> sentence_of_row;
  for (int64_t s = 0; s < 3; ++s)
    for (int64_t b = 0; b < kBeam; ++b) sentence_of_row.push_back(s);
  auto prefix = torch::randint(4, kVocab, {3 * kBeam, 10}, torch::kLong);
  prefix.select(1, 0).fill_(kEos);
  nn::IncrementalState state;
  state.reserve(6);  // also grows past the reserve
  auto sources = batch.tokens, lengths = batch.lengths;
  for (int64_t t = 0; t < prefix.size(1); ++t) {
    auto step = model->decode(prefix.narrow(1, 0, t + 1), encoder_out, &state);
    ASSERT_EQ(step.size(1), 1);
    auto rows = torch::tensor(sentence_of_row);
    auto full =
        model->forward(sources.index_select(0, rows), lengths.index_select(0, rows), prefix.narrow(1, 0, t + 1));
    EXPECT_LT((torch::log_softmax(step.select(1, 0), -1) - torch::log_softmax(full.select(1, t), -1))
                  .abs()
                  .max()
                  .item<double>(),
              1e-5)
        << "step " << t;
    // Beams of each sentence are permuted and duplicated within it; at step 4 the middle
    // sentence leaves.
    const int64_t n = static_cast<int64_t>(sentence_of_row.size()) / kBeam;
    std::vector<int64_t> order, kept;
    for (int64_t i = 0; i < n; ++i) {
      if (t == 4 && i == 1) continue;
      kept.push_back(i);
      for (int64_t b = 0; b < kBeam; ++b) order.push_back(i * kBeam + (b * b + t) % kBeam);
    }
    auto order_t = torch::tensor(order);
    if (static_cast<int64_t>(kept.size()) < n) {
      auto kept_t = torch::tensor(kept);
      state.reorder_beams(order_t, kept_t);
      encoder_out.reorder(kept_t);
      sources = sources.index_select(0, kept_t), lengths = lengths.index_select(0, kept_t);
      std::vector<int64_t> renumbered;
      for (size_t i = 0; i < kept.size(); ++i)
        for (int64_t b = 0; b < kBeam; ++b) renumbered.push_back(static_cast<int64_t>(i));
      sentence_of_row = renumbered;
    } else {
      state.reorder_beams(order_t);
    }
    prefix = prefix.index_select(0, order_t);
  }
}

}  // namespace
