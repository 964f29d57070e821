// A randomly initialised transformer_tiny (or another arch) and random source sentences for the
// generator's tests (no training: the search must be exact for any model).
#pragma once

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tests/support/model_fixtures.h"
#include "toolkit/nn/incremental_state.h"

namespace csan::generation::testing {

constexpr int64_t kVocab = 24;  // 4 specials + 20 words, joined dictionary
constexpr int64_t kPad = 1, kEos = 2, kUnk = 3;

inline std::shared_ptr<models::EncoderDecoderModel> tiny_model(uint64_t seed, double output_sharpness = 3.0,
                                                               const std::string& arch = "transformer_tiny") {
  const auto cfg = csan::testing::recipe("model:\n  arch: " + arch + "\n  max_target_positions: 64\n");
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

// log p(token_t | source, tokens_<t) for every t, by one full (non-incremental) forward.
inline std::vector<double> teacher_forced(models::EncoderDecoderModel& model, const SourceBatch& batch, int64_t row,
                                          const std::vector<int64_t>& tokens, int64_t decoder_start = kEos) {
  torch::NoGradGuard no_grad;
  const int64_t len = batch.lengths[row].item<int64_t>();
  auto src = batch.tokens.narrow(0, row, 1).narrow(1, 0, len);
  std::vector<int64_t> prev{decoder_start};
  prev.insert(prev.end(), tokens.begin(), tokens.end() - 1);
  auto logits = model.forward(src, batch.lengths.narrow(0, row, 1), torch::tensor(prev).view({1, -1}));
  auto lprobs = torch::log_softmax(logits[0], -1).to(torch::kDouble);
  std::vector<double> out;
  for (size_t t = 0; t < tokens.size(); ++t) out.push_back(lprobs[t][tokens[t]].item<double>());
  return out;
}

// How beam search moves the rows between the steps of incremental_vs_full_with_beam_reorders.
struct BeamMoves {
  int64_t leave_after_step = 3;  // after this step ...
  int64_t leaving = 0;           // ... this sentence leaves the batch
  int64_t reserve = 0;           // positions IncrementalState reserves up front (0: none)
  bool log_probs = false;        // compare log-softmax rather than logits (sharpened outputs)
};

// Decodes random prefixes of `beam` rows per sentence of `batch` step by step, as beam
// search does: the beams of a sentence share its encoder output, after every step rows are
// permuted and duplicated within their sentences, and one sentence leaves the batch
// (`moves`). At every step the incremental output must equal a full forward's of the same
// prefixes; the largest difference over all steps is returned (infinity when a step
// computed more than its newest position). `after_first_step` sees the state once the
// first step has filled it.
inline double incremental_vs_full_with_beam_reorders(
    models::EncoderDecoderModel& model, const SourceBatch& batch, int64_t beam, int64_t steps,
    const std::function<void(const nn::IncrementalState&)>& after_first_step = {}, const BeamMoves& moves = {}) {
  torch::NoGradGuard no_grad;
  auto encoder_out = model.encode_tokens(batch.tokens, batch.lengths);
  encoder_out.drop_empty_masks();  // as the generator does
  const int64_t sentences = batch.tokens.size(0);
  std::vector<int64_t> sentence_of_row;
  for (int64_t s = 0; s < sentences; ++s)
    for (int64_t b = 0; b < beam; ++b) sentence_of_row.push_back(s);
  auto prefix = torch::randint(4, kVocab, {sentences * beam, steps}, torch::kLong);
  prefix.select(1, 0).fill_(kEos);
  nn::IncrementalState state;
  if (moves.reserve > 0) state.reserve(moves.reserve);
  auto sources = batch.tokens, lengths = batch.lengths;
  const auto comparable = [&](const torch::Tensor& logits) {
    return moves.log_probs ? torch::log_softmax(logits, -1) : logits;
  };
  double worst = 0;
  for (int64_t t = 0; t < steps; ++t) {
    auto step = model.decode(prefix.narrow(1, 0, t + 1), encoder_out, &state);
    if (step.size(1) != 1) return INFINITY;
    if (t == 0 && after_first_step) after_first_step(state);
    auto rows = torch::tensor(sentence_of_row);
    auto full = model.forward(sources.index_select(0, rows), lengths.index_select(0, rows), prefix.narrow(1, 0, t + 1));
    worst = std::max(worst, (comparable(step.select(1, 0)) - comparable(full.select(1, t))).abs().max().item<double>());
    const int64_t n = static_cast<int64_t>(sentence_of_row.size()) / beam;
    std::vector<int64_t> order, kept;
    for (int64_t i = 0; i < n; ++i) {
      if (t == moves.leave_after_step && i == moves.leaving) continue;
      kept.push_back(i);
      for (int64_t b = 0; b < beam; ++b) order.push_back(i * beam + (b * b + t) % beam);  // b*b: duplicates
    }
    auto order_t = torch::tensor(order);
    if (static_cast<int64_t>(kept.size()) < n) {
      auto kept_t = torch::tensor(kept);
      state.reorder_beams(order_t, kept_t);
      encoder_out.reorder(kept_t);  // every memory, one call
      sources = sources.index_select(0, kept_t), lengths = lengths.index_select(0, kept_t);
      sentence_of_row.assign(kept.size() * beam, 0);
      for (size_t i = 0; i < sentence_of_row.size(); ++i) sentence_of_row[i] = static_cast<int64_t>(i) / beam;
    } else {
      state.reorder_beams(order_t);
    }
    prefix = prefix.index_select(0, order_t);
  }
  return worst;
}

}  // namespace csan::generation::testing
