// The decoder state of a search: one or more models (an ensemble), their encoder
// outputs and incremental caches, advanced one token at a time. Ensembles average
// probabilities (log of the mean of the models' probabilities), as fairseq does.
#pragma once

#include <torch/torch.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "toolkit/models/encoder_decoder_model.h"
#include "toolkit/nn/incremental_state.h"

namespace csan::generation {

// The scores of one step, normalized lazily: log-probabilities = scores - normalizer
// (per row). A single model returns its logits and their log-sum-exp, so the search
// never materializes a vocabulary-wide log-softmax; an ensemble returns its averaged
// log-probabilities with a zero normalizer.
// Under a lexical shortlist the scores hold only its columns: [R, S], column c being
// target id ids[c] (every other id is impossible), so the search's vocabulary-wide work
// shrinks with the output layer.
struct StepScores {
  torch::Tensor scores;      // [R, V] float, or [R, S] under a shortlist
  torch::Tensor normalizer;  // [R] float
  torch::Tensor ids;         // [S] int64, sorted: the id of each column; undefined: column = id
  // With request_attention: the attention over the source [R, source width] (float) of the
  // requested layer, averaged over the heads and over the ensemble's models (as fairseq).
  torch::Tensor attention;

  torch::Tensor lprobs() const { return scores - normalizer.unsqueeze(1); }
};

// How a shortlisted step hands its scores over: its own columns only (what the search
// uses), or spread over the whole vocabulary with -inf elsewhere (the reference the
// compact search is tested against).
enum class ShortlistScores { compact, whole_vocabulary };

// The IncrementalState key of `model`'s decoder layer `layer` (0-based; negative counts
// from the last) for alignments. Throws csan::Error naming --alignment-layer for a layer the
// model lacks, and --print-alignment for a model without one attention over its encoder.
std::string alignment_layer_key(const models::EncoderDecoderModel& model, int64_t layer);

class EnsembleDecoder {
 public:
  // Models must share the target vocabulary; they are switched to eval mode.
  explicit EnsembleDecoder(std::vector<std::shared_ptr<models::EncoderDecoderModel>> models, double temperature = 1.0);

  // Encodes src_tokens [B, S] once per sentence and starts empty caches for
  // `rows_per_sentence` rows (beams) of each sentence, room for `max_positions` tokens.
  // The encoder output and the encoder-side keys/values stay one row per sentence: the
  // beams of a sentence share them (MultiheadAttention groups the beams' queries).
  void start(const torch::Tensor& src_tokens, const torch::Tensor& src_lengths, int64_t rows_per_sentence,
             int64_t max_positions = 16);
  // prefix [R, t+1] (starting with </s>): log-probabilities [R, V] of token t+1. Only the
  // newest token runs through the decoders; earlier ones are read from the caches.
  torch::Tensor step(const torch::Tensor& prefix);
  // The same step, normalization left to the caller (see StepScores).
  StepScores step_scores(const torch::Tensor& prefix);
  // Keeps rows new_order [R'] of the self-attention caches; when sentences left the
  // batch, `sentences` [N'] names those that remain (new_order keeps each remaining
  // sentence's rows together, in the same order), and only then is the per-sentence
  // encoder state selected.
  void reorder(const torch::Tensor& new_order, const torch::Tensor& sentences = {});
  // Alignments: from the next start(), every step also returns the attention over the
  // source of decoder layer `layer` of each model (see alignment_layer_key, which throws);
  // std::nullopt: none (the default).
  void request_attention(std::optional<int64_t> layer);

  size_t size() const { return models_.size(); }
  // The type the caches keep attention keys and values in (set by start()): bf16 for a
  // model converted to bf16 or int8 on the CPU, else float32.
  torch::ScalarType cache_type() const { return states_.empty() ? torch::kFloat : states_.front().compact_type(); }
  // Where the models compute (the first model's device; an ensemble shares one).
  torch::Device device() const;

  // A lexical shortlist for the following searches (from their start()): the decoders
  // score only target ids `ids` [S] (sorted int64), which start() passes to each model in
  // its incremental state; step_scores() returns those columns (see StepScores) or, with
  // whole_vocabulary, [R, vocab_size] with -inf at the other ids. step() always answers
  // over the whole vocabulary. Undefined ids: all.
  void set_output_vocabulary(const torch::Tensor& ids, int64_t vocab_size,
                             ShortlistScores scores = ShortlistScores::compact);

 private:
  std::vector<std::shared_ptr<models::EncoderDecoderModel>> models_;
  std::vector<models::EncoderOut> encoder_outs_;
  std::vector<nn::IncrementalState> states_;
  double temperature_;
  torch::Tensor output_vocabulary_;
  int64_t vocab_size_ = 0;
  ShortlistScores shortlist_scores_ = ShortlistScores::compact;
  std::vector<std::string> attention_layers_;  // per model: the layer whose attention is read; empty: none

  // logits [R, S] over output_vocabulary_ -> [R, vocab_size_] with -inf elsewhere.
  torch::Tensor expand_to_vocabulary(const torch::Tensor& logits) const;
};

}  // namespace csan::generation
