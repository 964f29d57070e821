// Alignments: the attention the search keeps for each hypothesis (beams reordered,
// sentences leaving the batch, ensembles, converted precisions) equals a teacher-forced
// decode's, and the A- line functions give hand-checked pairs for a given matrix.
#include "toolkit/generation/alignment.h"

#include <gtest/gtest.h>

#include <numeric>

#include "tiny_model.h"
#include "toolkit/core/error.h"
#include "toolkit/generation/inference_precision.h"
#include "toolkit/generation/sequence_generator.h"
#include "toolkit/generation/text_codec.h"

namespace {

using namespace csan;
using namespace csan::generation;
using namespace csan::generation::testing;

// The attention [T, S] of `model`'s decoder layer `layer_key` over sentence `row` when it
// reads `tokens` (ending with </s>) all at once, as the search's steps should have seen it.
torch::Tensor teacher_forced_attention(models::EncoderDecoderModel& model, const SourceBatch& batch, int64_t row,
                                       const std::vector<int64_t>& tokens, const std::string& layer_key) {
  torch::NoGradGuard no_grad;
  const int64_t len = batch.lengths[row].item<int64_t>();
  auto src = batch.tokens.narrow(0, row, 1).narrow(1, 0, len);
  std::vector<int64_t> prev{kEos};
  prev.insert(prev.end(), tokens.begin(), tokens.end() - 1);
  nn::IncrementalState state;
  state.request_attention(layer_key);
  model.decode(torch::tensor(prev).view({1, -1}), model.encode_tokens(src, batch.lengths.narrow(0, row, 1)), &state);
  return state.take_attention()[0];
}

torch::Tensor kept_attention(const Hypothesis& hyp) {
  return torch::tensor(hyp.attention).view({static_cast<int64_t>(hyp.tokens.size()), hyp.source_length});
}

SearchOptions aligning_search(int64_t layer) {
  SearchOptions o;
  o.beam = 3;
  o.nbest = 3;
  o.max_len_a = 1.0;
  o.max_len_b = 3;
  o.attention = true;
  o.alignment_layer = layer;
  return o;
}

TEST(Alignment, KeptAttentionEqualsTeacherForcedAcrossBeamsAndLayers) {
  auto model = tiny_model(31);
  auto batch = random_sources(7, 32);  // sentences of different lengths end at different steps
  for (int64_t layer : {-1, 0}) {
    SequenceGenerator generator({model}, aligning_search(layer));
    const auto results = generator.generate(batch.tokens, batch.lengths);
    const std::string key = models::decoder_layer_key(layer < 0 ? model->cross_attention_layers() + layer : layer);
    for (int64_t s = 0; s < 7; ++s) {
      ASSERT_EQ(results[s].size(), 3u);
      for (const auto& hyp : results[s]) {
        ASSERT_EQ(hyp.source_length, batch.lengths[s].item<int64_t>());
        const torch::Tensor expected = teacher_forced_attention(*model, batch, s, hyp.tokens, key);
        EXPECT_LT((kept_attention(hyp) - expected).abs().max().item<double>(), 1e-5) << "sentence " << s;
      }
    }
  }
}

TEST(Alignment, EnsembleAveragesItsModelsAttention) {
  auto m1 = tiny_model(33), m2 = tiny_model(34);
  auto batch = random_sources(3, 35);
  SequenceGenerator generator({m1, m2}, aligning_search(-1));
  const auto results = generator.generate(batch.tokens, batch.lengths);
  const std::string key = models::decoder_layer_key(m1->cross_attention_layers() - 1);
  for (int64_t s = 0; s < 3; ++s) {
    const Hypothesis& hyp = results[s][0];
    const torch::Tensor expected = (teacher_forced_attention(*m1, batch, s, hyp.tokens, key) +
                                    teacher_forced_attention(*m2, batch, s, hyp.tokens, key)) /
                                   2;
    EXPECT_LT((kept_attention(hyp) - expected).abs().max().item<double>(), 1e-5);
  }
}

TEST(Alignment, ConvertedPrecisionsKeepTheirOwnAttention) {
  auto batch = random_sources(3, 36);
  for (auto precision : {nn::Precision::bf16, nn::Precision::int8}) {
    auto model = tiny_model(37);
    convert_for_inference(*model, InferencePrecision{precision, {}});
    SequenceGenerator generator({model}, aligning_search(-1));
    const auto results = generator.generate(batch.tokens, batch.lengths);
    const std::string key = models::decoder_layer_key(model->cross_attention_layers() - 1);
    for (int64_t s = 0; s < 3; ++s) {
      const Hypothesis& hyp = results[s][0];
      const torch::Tensor kept = kept_attention(hyp);
      EXPECT_LT((kept.sum(1) - 1).abs().max().item<double>(), 1e-4) << "rows are distributions";
      // The same converted model read at once (its caches compact as the search's are not:
      // bf16 keys differ in their last bits).
      EXPECT_LT((kept - teacher_forced_attention(*model, batch, s, hyp.tokens, key)).abs().max().item<double>(), 2e-2)
          << nn::precision_name(precision);
    }
  }
}

TEST(Alignment, ModelsWithoutOneCrossAttentionAndMissingLayersAreRefused) {
  auto model = tiny_model(38);
  const int64_t layers = model->cross_attention_layers();
  EXPECT_EQ(alignment_layer_key(*model, -layers), models::decoder_layer_key(0));
  for (int64_t bad : {layers, -layers - 1}) {
    try {
      alignment_layer_key(*model, bad);
      FAIL() << bad;
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).rfind("--alignment-layer: " + std::to_string(bad), 0), 0u) << e.what();
    }
  }
  auto ccn = tiny_model(39, 3.0, "ccn_tiny");
  try {
    alignment_layer_key(*ccn, -1);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--print-alignment: "), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("CCN"), std::string::npos) << e.what();
  }
}

// Two target tokens and </s> over three source tokens and </s>, checked by hand.
const std::vector<float> kAttention = {0.1f,  0.6f,  0.2f,  0.1f,    // t0: s1
                                       0.2f,  0.1f,  0.3f,  0.4f,    // t1: s2 (</s> is never aligned)
                                       0.25f, 0.25f, 0.25f, 0.25f};  // </s>: no pair

TEST(Alignment, HardAndSoftLinesOfAHandCheckedMatrix) {
  const std::vector<int64_t> source_tokens = {0, 1, 2, -1}, target_tokens = {0, 1, -1};
  EXPECT_EQ(hard_alignment(kAttention, source_tokens, target_tokens), "1-0 2-1");
  EXPECT_EQ(soft_alignment(kAttention, source_tokens, target_tokens, true),
            "0.100000,0.600000,0.200000,0.100000 0.200000,0.100000,0.300000,0.400000 "
            "0.250000,0.250000,0.250000,0.250000");
  // Words: source tokens 0 and 1 form word 0; both target tokens form word 0.
  const std::vector<int64_t> source_words = {0, 0, 1, -1}, target_words = {0, 0, -1};
  EXPECT_EQ(hard_alignment(kAttention, source_words, target_words), "0-0 1-0");
  // Word 0 of the target: mean of (0.7, 0.2) and (0.3, 0.3).
  EXPECT_EQ(soft_alignment(kAttention, source_words, target_words, false), "0.500000,0.250000");
  // Equal maxima: the first source token.
  EXPECT_EQ(hard_alignment({0.4f, 0.4f, 0.2f}, {0, 1, -1}, {0}), "0-0");
  EXPECT_THROW(hard_alignment({0.5f}, {0, -1}, {0}), Error);
  EXPECT_EQ(parse_alignment_format(""), AlignmentFormat::none);
  EXPECT_THROW(parse_alignment_format("Hard"), Error);
}

TEST(Alignment, UnitsAreTokensOrSentencePieceWords) {
  text::SentencePieceTrainOptions options;
  options.vocab_size = 25;
  options.model_type = "bpe";
  const std::vector<std::string> lines = {"lower lowest newer newest", "low new wider widest", "lowest newer wide"};
  const auto spm = text::SentencePieceModel::train({&lines}, options);
  text::Dictionary dict;
  for (int i = 0; i < spm.vocab_size(); ++i) dict.add_symbol(spm.piece(i));
  const TextCodec codec(dict, &spm);
  const std::vector<int64_t> ids = codec.encode("lowest wider", "test", 1, 0).ids;
  const std::vector<std::string> pieces = spm.encode("lowest wider");
  ASSERT_EQ(ids.size(), pieces.size() + 1);
  std::vector<int64_t> words;
  int64_t word = -1;
  for (const auto& p : pieces) words.push_back(word += p.rfind("\u2581", 0) == 0 ? 1 : 0);
  words.push_back(-1);  // </s>
  EXPECT_EQ(codec.units(ids, true), words);
  EXPECT_EQ(words.end()[-2], 1) << "two words";
  std::vector<int64_t> tokens(pieces.size());
  std::iota(tokens.begin(), tokens.end(), 0);
  tokens.push_back(-1);
  EXPECT_EQ(codec.units(ids, false), tokens);
}

}  // namespace
