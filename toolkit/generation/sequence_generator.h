// Batched search over an EnsembleDecoder: every sentence keeps `beam` rows; the logits
// processors constrain each step, the SearchStrategy picks tokens, and sentences whose
// search is over leave the batch (their rows are dropped from every cache), so later
// steps cost only what is still being searched.
#pragma once

#include <torch/torch.h>

#include <memory>
#include <vector>

#include "toolkit/generation/ensemble_decoder.h"
#include "toolkit/generation/hypothesis.h"
#include "toolkit/generation/logits_processor.h"
#include "toolkit/generation/search_options.h"
#include "toolkit/generation/search_strategy.h"

namespace csan::generation {

// The length limit of a sentence with `src_length` tokens (</s> included) for decoders of
// `max_target_positions`: at most this many tokens before the </s>.
int64_t max_output_length(const SearchOptions& options, int64_t src_length, int64_t max_target_positions);

class SequenceGenerator {
 public:
  SequenceGenerator(std::vector<std::shared_ptr<models::EncoderDecoderModel>> models, const SearchOptions& options,
                    const SpecialTokens& special = {});

  // src_tokens [B, S] right-padded, src_lengths [B] (tokens incl. </s>); forced_prefix
  // [B, P] (pad where a sentence has fewer) for --prefix-size; `constraints` (with
  // SearchOptions::constraints) each sentence's lexical constraints. Returns per sentence,
  // in input order, up to nbest hypotheses, best first.
  std::vector<std::vector<Hypothesis>> generate(const torch::Tensor& src_tokens, const torch::Tensor& src_lengths,
                                                const torch::Tensor& forced_prefix = {},
                                                const std::vector<Constraints>* constraints = nullptr);

  // Restarts sampling's random stream at `seed` (beam search draws nothing). Called per
  // batch with a seed derived from the batch's position, sampled outputs do not depend
  // on which thread translates which batch.
  void reseed(uint64_t seed) { search_->reseed(seed); }
  // See EnsembleDecoder::set_output_vocabulary (a lexical shortlist's ids for the next
  // batches). The search then runs over the shortlist's columns only; its results are
  // the same as over the whole vocabulary with the other ids impossible (whole_vocabulary).
  void set_output_vocabulary(const torch::Tensor& ids, int64_t vocab_size,
                             ShortlistScores scores = ShortlistScores::compact) {
    decoder_.set_output_vocabulary(ids, vocab_size, scores);
    columns_ = scores == ShortlistScores::compact ? ScoreColumns(ids, vocab_size) : ScoreColumns();
    column_ids_.clear();
    if (ids.defined() && scores == ShortlistScores::compact) {
      const torch::Tensor host = ids.to(torch::kCPU).to(torch::kLong).contiguous();
      column_ids_.assign(host.data_ptr<int64_t>(), host.data_ptr<int64_t>() + host.numel());
    }
  }

  // max_output_length for this generator's models.
  int64_t max_length(int64_t src_length) const {
    return max_output_length(options_, src_length, max_target_positions_);
  }
  const SearchOptions& options() const { return options_; }

 private:
  void force_eos_scores_zero(StepScores& scores, int64_t step, const std::vector<int64_t>& row_max_len) const;

  EnsembleDecoder decoder_;
  SearchOptions options_;
  SpecialTokens special_;
  int64_t start_token_;  // the decoder's first input: </s>, or <pad> (model.decoder_start)
  std::vector<std::unique_ptr<LogitsProcessor>> processors_;
  std::unique_ptr<SearchStrategy> search_;
  ScoreColumns columns_;  // where each id's score is (a shortlist's columns)
  std::vector<int64_t> column_ids_;  // the id of each column (a shortlist's); empty: column = id
  int64_t max_target_positions_;
};

}  // namespace csan::generation
