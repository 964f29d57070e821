// CCN through the generator: incremental decoding, which caches both crossed
// encoder-decoder attentions' keys and values under keys naming their memories, equals
// full recomputation across beam reorders and sentences leaving the batch; beam search,
// n-best, sampling and an ensemble with a Transformer (one memory beside two) score
// hypotheses as the full models do.
#include <gtest/gtest.h>

#include <cmath>

#include "tiny_model.h"
#include "toolkit/generation/ensemble_decoder.h"
#include "toolkit/generation/sequence_generator.h"

namespace {

using namespace csan;
using namespace csan::generation;
using namespace csan::generation::testing;

std::shared_ptr<models::EncoderDecoderModel> ccn_model(uint64_t seed) {
  const auto cfg = csan::testing::recipe("model:\n  arch: ccn_tiny\n  max_target_positions: 64\n");
  torch::manual_seed(seed);
  auto model = csan::testing::translation_model(cfg, csan::testing::joined(kVocab));
  // Sharper outputs than random weights give, as a trained model's (see tiny_model).
  torch::NoGradGuard no_grad;
  for (auto& p : model->named_parameters())
    if (p.key().find("output_projection") != std::string::npos) p.value().mul_(3.0);
  model->eval();
  return model;
}

TEST(CcnDecoding, IncrementalEqualsFullAcrossBeamReordersAndSentencesLeaving) {
  auto model = ccn_model(3);
  const double difference = incremental_vs_full_with_beam_reorders(
      *model, random_sources(3, 17), 3, 8, [](const nn::IncrementalState& state) {
        // Both branches' crossed attentions cached once, under keys naming their memories.
        for (const char* key : {"decoder.layers.0.left.encoder_attn.k_right.v_left.prev_key",
                                "decoder.layers.0.left.encoder_attn.k_right.v_left.prev_value",
                                "decoder.layers.1.right.encoder_attn.k_left.v_right.prev_key",
                                "decoder.layers.1.right.encoder_attn.k_left.v_right.prev_value"})
          EXPECT_TRUE(state.has(key)) << key;
      });
  EXPECT_LT(difference, 1e-5);
}

TEST(CcnDecoding, BeamSearchNbestAndSamplingScoreAsTheFullModel) {
  auto model = ccn_model(5);
  auto batch = random_sources(5, 23);
  for (const bool sampling : {false, true}) {
    SearchOptions o;
    o.beam = 3;
    o.nbest = 3;
    o.max_len_a = 1.0;
    o.max_len_b = 3;
    o.sampling = sampling;
    o.seed = 4;
    SequenceGenerator generator({model}, o);
    auto hyps = generator.generate(batch.tokens, batch.lengths);
    for (int64_t s = 0; s < 5; ++s) {
      ASSERT_EQ(hyps[s].size(), 3u);
      for (const auto& h : hyps[s]) {
        auto expected = teacher_forced(*model, batch, s, h.tokens);
        double sum = 0;
        for (size_t t = 0; t < expected.size(); ++t) {
          EXPECT_NEAR(h.positional_scores[t], expected[t], 1e-4) << "sentence " << s << " position " << t;
          sum += expected[t];
        }
        EXPECT_NEAR(h.score, sum / double(h.tokens.size()), 1e-4);
      }
      if (!sampling) {
        EXPECT_GE(hyps[s][0].score, hyps[s][2].score);
      }
    }
    if (sampling) {  // seeded: a generator with the same seed draws the same again
      auto again = SequenceGenerator({model}, o).generate(batch.tokens, batch.lengths);
      for (int64_t s = 0; s < 5; ++s) EXPECT_EQ(again[s][0].tokens, hyps[s][0].tokens);
    }
  }
}

// An ensemble of a CCN (memories left and right) and a Transformer (memory encoder)
// averages their probabilities at every step.
TEST(CcnDecoding, EnsembleWithATransformerAveragesProbabilities) {
  auto ccn = ccn_model(11), transformer = tiny_model(12);
  auto batch = random_sources(3, 21);
  torch::NoGradGuard no_grad;
  EnsembleDecoder ensemble({ccn, transformer});
  ensemble.start(batch.tokens, batch.lengths, 2);
  auto prefix = torch::randint(4, kVocab, {6, 4}, torch::kLong);
  prefix.select(1, 0).fill_(kEos);
  auto rows = torch::tensor(std::vector<int64_t>{0, 0, 1, 1, 2, 2});
  auto sources = batch.tokens.index_select(0, rows), lengths = batch.lengths.index_select(0, rows);
  for (int64_t t = 0; t < prefix.size(1); ++t) {
    auto got = ensemble.step(prefix.narrow(1, 0, t + 1));
    auto p1 = torch::softmax(ccn->forward(sources, lengths, prefix.narrow(1, 0, t + 1)).select(1, t), -1);
    auto p2 = torch::softmax(transformer->forward(sources, lengths, prefix.narrow(1, 0, t + 1)).select(1, t), -1);
    EXPECT_LT((got - ((p1 + p2) / 2).log()).abs().max().item<double>(), 1e-5) << "step " << t;
  }
}

}  // namespace
