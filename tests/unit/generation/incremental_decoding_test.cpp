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

// restart(): the next search writes the growing entries' buffers again where it fits in
// them, and finds nothing else of the last one (entries, history, settings).
TEST(IncrementalState, RestartKeepsTheCachesBuffersAndForgetsTheSearch) {
  nn::IncrementalState state;
  state.reserve(8);
  state.append("self", torch::randn({3, 2, 2, 5}));
  state.set("cross", torch::randn({1, 2, 4, 5}));
  state.reorder_beams(torch::tensor(std::vector<int64_t>{2, 2, 0}));
  state.set_output_vocabulary(std::make_shared<nn::OutputVocabulary>(torch::tensor(std::vector<int64_t>{1, 3})));
  state.request_attention("decoder.layers.0");
  const void* buffer = state.history("self").positions.data_ptr();

  state.restart();
  EXPECT_FALSE(state.has("cross"));
  EXPECT_EQ(state.length("self"), 0);
  EXPECT_EQ(state.output_vocabulary(), nullptr);
  EXPECT_FALSE(state.attention_requested("decoder.layers.0"));
  auto fewer = torch::randn({2, 2, 1, 5});  // fewer rows: written into the kept buffer
  state.append("self", fewer);
  EXPECT_EQ(state.history("self").positions.data_ptr(), buffer);
  EXPECT_TRUE(torch::equal(state.at("self"), fewer));
  EXPECT_TRUE(torch::equal(state.history("self").rows_at, torch::arange(2).unsqueeze(1)));

  state.restart();
  auto more = torch::randn({4, 2, 1, 5});  // more rows than the buffer holds: a new one
  state.append("self", more);
  EXPECT_NE(state.history("self").positions.data_ptr(), buffer);
  EXPECT_TRUE(torch::equal(state.at("self"), more));

  state.restart();
  state.set_compact_type(torch::kBFloat16);  // stored in another type: a new buffer
  state.append("self", more, /*compact=*/true);
  EXPECT_EQ(state.history("self").positions.scalar_type(), torch::kBFloat16);
  EXPECT_TRUE(torch::equal(state.at("self"), more.to(torch::kBFloat16).to(torch::kFloat)));
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
  auto model = tiny_model(21);
  // Padded sentences of different lengths; the middle one leaves after step 4; the state
  // also grows past its reserve.
  BeamMoves moves;
  moves.leave_after_step = 4, moves.leaving = 1, moves.reserve = 6, moves.log_probs = true;
  EXPECT_LT(incremental_vs_full_with_beam_reorders(*model, random_sources(3, 31), 4, 10, {}, moves), 1e-5);
}

}  // namespace
