// A randomly initialised transformer_tiny and random source sentences for the
// generator's tests (no training: the search must be exact for any model).
#pragma once

#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "tests/support/model_fixtures.h"

namespace csan::generation::testing {

constexpr int64_t kVocab = 24;  // 4 specials + 20 words, joined dictionary
constexpr int64_t kPad = 1, kEos = 2, kUnk = 3;

inline std::shared_ptr<models::EncoderDecoderModel> tiny_model(uint64_t seed, double output_sharpness = 3.0) {
  const auto cfg = csan::testing::recipe("model:\n  arch: transformer_tiny\n  max_target_positions: 64\n");
  torch::manual_seed(seed);
  auto model = csan::testing::translation_model(cfg, csan::testing::joined(kVocab));
  // Random weights give nearly uniform next-token distributions; sharpening the output
  // layer gives the peaked, varied distributions of a trained model.
  torch::NoGradGuard no_grad;
  for (auto& p : model->named_parameters())
    if (p.key().find("output_projection") != std::string::npos) p.value().mul_(output_sharpness);
  model->eval();
  return model;
}

struct SourceBatch {
  torch::Tensor tokens;   // [B, S] right-padded, each row ends with </s>
  torch::Tensor lengths;  // [B]
};

// Sentences of 3..max_words random words (ids 4..kVocab-1) plus </s>.
inline SourceBatch random_sources(int64_t count, uint64_t seed, int64_t max_words = 9) {
  torch::manual_seed(seed);
  auto lengths = torch::randint(3, max_words + 1, {count}, torch::kLong) + 1;
  const int64_t longest = lengths.max().item<int64_t>();
  auto tokens = torch::full({count, longest}, kPad, torch::kLong);
  for (int64_t i = 0; i < count; ++i) {
    const int64_t len = lengths[i].item<int64_t>();
    tokens[i].narrow(0, 0, len - 1).copy_(torch::randint(4, kVocab, {len - 1}, torch::kLong));
    tokens[i][len - 1] = kEos;
  }
  return {tokens, lengths};
}

inline SourceBatch rows(const SourceBatch& batch, std::vector<int64_t> which) {
  auto index = torch::tensor(which, torch::kLong);
  auto lengths = batch.lengths.index_select(0, index);
  return {batch.tokens.index_select(0, index).narrow(1, 0, lengths.max().item<int64_t>()), lengths};
}

}  // namespace csan::generation::testing
