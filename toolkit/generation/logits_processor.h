// Constraints on the next-token scores, applied in a chain before the search strategy
// picks tokens: each one edits the log-probabilities [R, V] in place, so a new
// constraint never touches the search loop.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "toolkit/generation/search_options.h"

namespace csan::generation {

struct SpecialTokens {
  int64_t bos = 0, pad = 1, eos = 2, unk = 3;
  // The decoder's first input when it is not the model's own (</s>, or <pad> under
  // model.decoder_start): a multilingual model's target-language token; -1: the model's.
  int64_t decoder_start = -1;
};

// Where target ids sit among a step's score columns: each id in its own column, or
// (under a lexical shortlist) only the shortlist's sorted ids, the others having no
// column: they are impossible already, so forbidding them is nothing to do.
class ScoreColumns {
 public:
  ScoreColumns() = default;  // column = id
  // `ids` [S] sorted int64 (undefined: column = id) of a vocabulary of `vocab_size`.
  ScoreColumns(const torch::Tensor& ids, int64_t vocab_size);
  // The column of `id`, or -1.
  int64_t of(int64_t id) const { return by_id_.empty() ? id : by_id_[id]; }
  // The columns of `ids` (any shape, on any device), -1 where none.
  torch::Tensor of(const torch::Tensor& ids) const;

 private:
  std::vector<int64_t> by_id_;  // empty: identity
  torch::Tensor by_id_tensor_;
};

// What a processor may look at for the step choosing token `step` (0 = the first
// token after the leading </s>).
struct StepContext {
  int64_t step = 0;
  torch::Tensor prefix;                 // [R, step + 1] tokens so far, starting with </s>
  const std::vector<int64_t>* max_len;  // per row: </s> is forced at step >= max_len[r]
  torch::Tensor forced;                 // [R, P] tokens to force (prefix forcing), pad = none
  const ScoreColumns* columns;          // where each id's score is (ids in prefix/forced are ids)
};

class LogitsProcessor {
 public:
  virtual ~LogitsProcessor() = default;
  // lprobs [R, V] (or a shortlist's [R, S], see context.columns): the step's scores,
  // log-probabilities up to a per-row constant (the
  // search subtracts the normalizer afterwards, see StepScores). A processor may only
  // set entries to -inf, keep or subtract constants from them: such edits give the same
  // result before or after normalization, as fairseq applies them (after log_softmax).
  virtual void apply(torch::Tensor& lprobs, const StepContext& context) const = 0;
};

// <pad> and <s> are never produced; <unk> is penalized by `unkpen`.
class SpecialTokenPenalty : public LogitsProcessor {
 public:
  SpecialTokenPenalty(SpecialTokens special, double unkpen, bool allow_bos)
      : special_(special), unkpen_(unkpen), allow_bos_(allow_bos) {}
  void apply(torch::Tensor& lprobs, const StepContext& context) const override;

 private:
  SpecialTokens special_;
  double unkpen_;
  bool allow_bos_;
};

// </s> is forbidden before `min_len` tokens (unless the row's maximum length comes first).
class MinLength : public LogitsProcessor {
 public:
  MinLength(int64_t min_len, int64_t eos) : min_len_(min_len), eos_(eos) {}
  void apply(torch::Tensor& lprobs, const StepContext& context) const override;

 private:
  int64_t min_len_, eos_;
};

// fairseq's --no-repeat-ngram-size: a token that would complete an n-gram already in
// the row's prefix (the leading </s> included) is forbidden.
class NoRepeatNgram : public LogitsProcessor {
 public:
  explicit NoRepeatNgram(int64_t n) : n_(n) {}
  void apply(torch::Tensor& lprobs, const StepContext& context) const override;

 private:
  int64_t n_;
};

// Rows with a forced token at this step keep only that token's log-probability.
class PrefixForcing : public LogitsProcessor {
 public:
  explicit PrefixForcing(int64_t pad) : pad_(pad) {}
  void apply(torch::Tensor& lprobs, const StepContext& context) const override;

 private:
  int64_t pad_;
};

// Rows at their maximum length keep only </s> (with the model's log-probability).
class MaxLength : public LogitsProcessor {
 public:
  explicit MaxLength(int64_t eos) : eos_(eos) {}
  void apply(torch::Tensor& lprobs, const StepContext& context) const override;

 private:
  int64_t eos_;
};

// The chain the options ask for, in the order fairseq applies the same rules.
std::vector<std::unique_ptr<LogitsProcessor>> make_processors(const SearchOptions& options,
                                                              const SpecialTokens& special);

}  // namespace csan::generation
