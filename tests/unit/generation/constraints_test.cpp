// Lexically constrained beam search: the progress through the constraints, hand-checked;
// every hypothesis holding every constraint (multi-token, ones the model would not produce,
// ordered or not) with ensembles, n-best, converted precisions and a shortlist; the scores
// still the model's; no constraints giving beam search's output exactly.
#include "toolkit/generation/constraints.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "tiny_model.h"
#include "toolkit/core/error.h"
#include "toolkit/generation/inference_precision.h"
#include "toolkit/generation/sequence_generator.h"

namespace {

using namespace csan;
using namespace csan::generation;
using namespace csan::generation::testing;

TEST(Constraints, ProgressThroughOrderedAndUnorderedConstraints) {
  const Constraints constraints = {{5, 6}, {7}};
  ConstraintState ordered(&constraints, ConstraintOrder::ordered);
  EXPECT_EQ(ordered.total(), 3);
  EXPECT_EQ(ordered.next_tokens(), std::vector<int64_t>{5});
  EXPECT_EQ(ordered.advance(7).met(), 0) << "7 comes after 5 6";
  const ConstraintState five = ordered.advance(5);
  EXPECT_EQ(five.met(), 1);
  EXPECT_EQ(five.next_tokens(), std::vector<int64_t>{6});
  EXPECT_EQ(five.advance(9).met(), 0) << "a broken constraint starts again";
  EXPECT_EQ(five.advance(5).met(), 1) << "... at its first token";
  const ConstraintState done = five.advance(6).advance(8).advance(7);
  EXPECT_TRUE(done.finished());
  EXPECT_EQ(done.met(), 3);
  EXPECT_TRUE(done.next_tokens().empty());

  ConstraintState unordered(&constraints, ConstraintOrder::unordered);
  EXPECT_EQ(unordered.next_tokens(), (std::vector<int64_t>{5, 7}));
  const ConstraintState seven = unordered.advance(7);
  EXPECT_EQ(seven.met(), 1);
  EXPECT_EQ(seven.next_tokens(), std::vector<int64_t>{5});
  EXPECT_EQ(unordered.advance(5).advance(7).met(), 1) << "5 then 7: 5 6 broken off, 7 met";
  EXPECT_TRUE(seven.advance(5).advance(6).finished());
  EXPECT_FALSE(unordered.advance(5).advance(6).finished());

  const Constraints shared_start = {{4, 5}, {4, 6}};
  ConstraintState both(&shared_start, ConstraintOrder::unordered);
  EXPECT_EQ(both.advance(4).advance(6).met(), 2) << "4 6 is the second constraint";
  EXPECT_TRUE(both.advance(4).advance(6).advance(4).advance(5).finished());
  EXPECT_EQ(parse_constraint_order(""), ConstraintOrder::none);
  EXPECT_THROW(parse_constraint_order("sorted"), Error);
}

// Whether `tokens` holds `c` as consecutive tokens at or after `from`; returns where it ends.
int64_t find_after(const std::vector<int64_t>& tokens, const std::vector<int64_t>& c, int64_t from) {
  const auto at = std::search(tokens.begin() + from, tokens.end(), c.begin(), c.end());
  return at == tokens.end() ? -1 : static_cast<int64_t>(at - tokens.begin() + static_cast<int64_t>(c.size()));
}

void expect_constraints_held(const std::vector<std::vector<Hypothesis>>& results,
                             const std::vector<Constraints>& constraints, ConstraintOrder order, size_t nbest) {
  for (size_t s = 0; s < results.size(); ++s) {
    // Hypotheses that cannot meet the constraints in time never end: fewer than nbest may.
    ASSERT_GE(results[s].size(), 1u) << "sentence " << s;
    ASSERT_LE(results[s].size(), nbest) << "sentence " << s;
    for (const auto& hyp : results[s]) {
      int64_t from = 0;
      for (const auto& c : constraints[s]) {
        const int64_t end = find_after(hyp.tokens, c, order == ConstraintOrder::ordered ? from : 0);
        EXPECT_GE(end, 0) << "sentence " << s << " misses a constraint";
        from = std::max<int64_t>(end, 0);
      }
    }
  }
}

SearchOptions constrained_search(ConstraintOrder order) {
  SearchOptions o;
  o.beam = 4;
  o.nbest = 2;
  o.max_len_a = 1.0;
  o.max_len_b = 4;
  o.constraints = order;
  return o;
}

// Per sentence: none, one token, a two-token phrase, then three constraints (2 + 1 + 3 tokens).
std::vector<Constraints> some_constraints() {
  return {{}, {{9}}, {{17, 4}}, {{5, 21}, {13}, {8, 8, 22}}, {{12}, {20, 6}}};
}

TEST(Constraints, EveryHypothesisHoldsEveryConstraintWithScoresOfTheModel) {
  auto model = tiny_model(41);
  auto batch = random_sources(5, 42);
  const auto constraints = some_constraints();
  for (auto order : {ConstraintOrder::ordered, ConstraintOrder::unordered}) {
    SequenceGenerator generator({model}, constrained_search(order));
    const auto results = generator.generate(batch.tokens, batch.lengths, {}, &constraints);
    expect_constraints_held(results, constraints, order, 2);
    for (int64_t s = 0; s < 5; ++s)
      for (const auto& hyp : results[s]) {
        const auto expected = teacher_forced(*model, batch, s, hyp.tokens);
        for (size_t t = 0; t < expected.size(); ++t) EXPECT_NEAR(hyp.positional_scores[t], expected[t], 1e-4);
      }
  }
}

TEST(Constraints, NoConstraintsGiveBeamSearchsOutputExactly) {
  auto model = tiny_model(43);
  auto batch = random_sources(6, 44);
  SearchOptions plain = constrained_search(ConstraintOrder::none);
  const auto expected = SequenceGenerator({model}, plain).generate(batch.tokens, batch.lengths);
  const std::vector<Constraints> none(6);
  const auto got = SequenceGenerator({model}, constrained_search(ConstraintOrder::ordered))
                       .generate(batch.tokens, batch.lengths, {}, &none);
  for (int64_t s = 0; s < 6; ++s) {
    ASSERT_EQ(got[s].size(), expected[s].size());
    for (size_t h = 0; h < got[s].size(); ++h) {
      EXPECT_EQ(got[s][h].tokens, expected[s][h].tokens);
      EXPECT_EQ(got[s][h].score, expected[s][h].score);
    }
  }
}

TEST(Constraints, HeldWithEnsemblesPrecisionsAndAShortlist) {
  auto batch = random_sources(5, 45);
  const auto constraints = some_constraints();
  const SearchOptions o = constrained_search(ConstraintOrder::unordered);
  {
    SequenceGenerator ensemble({tiny_model(46), tiny_model(47)}, o);
    expect_constraints_held(ensemble.generate(batch.tokens, batch.lengths, {}, &constraints), constraints,
                            o.constraints, 2);
  }
  for (auto precision : {nn::Precision::bf16, nn::Precision::int8}) {
    auto model = tiny_model(48);
    convert_for_inference(*model, InferencePrecision{precision, {}});
    SequenceGenerator generator({model}, o);
    expect_constraints_held(generator.generate(batch.tokens, batch.lengths, {}, &constraints), constraints,
                            o.constraints, 2);
  }
  // A shortlist (the batch translator adds the constraints' ids to it).
  SequenceGenerator shortlisted({tiny_model(49)}, o);
  shortlisted.set_output_vocabulary(
      torch::tensor(std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 8, 9, 10, 12, 13, 17, 20, 21, 22}), kVocab);
  const auto results = shortlisted.generate(batch.tokens, batch.lengths, {}, &constraints);
  expect_constraints_held(results, constraints, o.constraints, 2);
  for (const auto& hyps : results)
    for (const auto& hyp : hyps)
      for (int64_t id : hyp.tokens) EXPECT_NE(id, 7) << "7 is not in the shortlist";
}

TEST(Constraints, SamplingIsRefused) {
  SearchOptions o = constrained_search(ConstraintOrder::ordered);
  o.sampling = true;
  try {
    validate(o);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("--constraints: ", 0), 0u) << e.what();
  }
}

}  // namespace
