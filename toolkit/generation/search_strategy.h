// How the next tokens are chosen from the (processed) log-probabilities: beam search
// keeps the best extensions of all beams, sampling draws one token per beam. Greedy
// decoding is beam search with one beam.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <torch/torch.h>

#include "toolkit/generation/constraints.h"
#include "toolkit/generation/search_options.h"

namespace csan::generation {

// Candidates of one step, per sentence, best first for beam search. All [N, C].
struct Candidates {
  torch::Tensor scores;  // cumulative log-probabilities (float)
  torch::Tensor tokens;  // int64
  torch::Tensor beams;   // int64: which beam (0..beam-1) of the sentence each extends
  torch::Tensor token_lprobs;  // float: the log-probability of each candidate's token
};

class SearchStrategy {
 public:
  virtual ~SearchStrategy() = default;
  // Log-probabilities scores - normalizer of K beams per sentence: scores [N, K, V],
  // normalizer [N, K] (see StepScores); cumulative [N, K] (dead beams: -inf). At step 0
  // every beam of a sentence holds the same prefix, so only beam 0 extends.
  virtual Candidates step(int64_t step, const torch::Tensor& scores, const torch::Tensor& normalizer,
                          const torch::Tensor& cumulative) = 0;
  // Restarts the random stream (strategies that draw) at `seed`.
  virtual void reseed(uint64_t /*seed*/) {}
  // Called before a batch's first step, and after each step with what was chosen: row r
  // of the next step extends row rows[r] of this one with target id tokens[r]. Strategies
  // that follow each hypothesis (constraints) keep their state per row with these.
  struct Batch {
    const std::vector<Constraints>* constraints = nullptr;  // per sentence; null: none
    int64_t beam = 1;
    std::vector<int64_t> row_max_len;  // per row: </s> is forced at this step
    std::vector<int64_t> column_ids;   // a shortlist's id of each score column; empty: column = id
    int64_t eos = 2;
  };
  virtual void begin(const Batch& /*batch*/) {}
  virtual void advance(const std::vector<int64_t>& /*rows*/, const std::vector<int64_t>& /*tokens*/) {}
};

// Top 2K extensions of K beams (fairseq's BeamSearch): K of them can end with </s>
// and K still remain to continue.
class BeamSearch : public SearchStrategy {
 public:
  Candidates step(int64_t step, const torch::Tensor& scores, const torch::Tensor& normalizer,
                  const torch::Tensor& cumulative) override;
};

// fairseq's Sampling: at step 0, K tokens drawn (with replacement) from the first
// beam; then one token per beam. --sampling-topk / --sampling-topp restrict the draw;
// the scores stay the model's log-probabilities.
class Sampling : public SearchStrategy {
 public:
  Sampling(int64_t topk, double topp, uint64_t seed);
  Candidates step(int64_t step, const torch::Tensor& scores, const torch::Tensor& normalizer,
                  const torch::Tensor& cumulative) override;
  void reseed(uint64_t seed) override;

 private:
  torch::Tensor draw(const torch::Tensor& probs, int64_t count);
  int64_t topk_;
  double topp_;
  at::Generator generator_;
};

// Lexically constrained beam search with dynamic beam allocation (Post & Vilar 2018, as
// Hu et al. 2019 and fairseq's LexicallyConstrainedBeamSearch do it): each step's candidates
// are beam search's top 2K, each beam's best token and each beam's tokens that advance its
// constraints; they are grouped into banks by the constraint tokens they have met, and
// taken round-robin from the banks, the furthest first, so that the beam always holds
// hypotheses at every stage of progress. </s> is forbidden until a hypothesis has met
// every constraint, and a hypothesis with no more room than constraint tokens left may
// only advance them, so that every output holds every constraint.
class ConstrainedBeamSearch : public SearchStrategy {
 public:
  explicit ConstrainedBeamSearch(ConstraintOrder order) : order_(order) {}
  Candidates step(int64_t step, const torch::Tensor& scores, const torch::Tensor& normalizer,
                  const torch::Tensor& cumulative) override;
  void begin(const Batch& batch) override;
  void advance(const std::vector<int64_t>& rows, const std::vector<int64_t>& tokens) override;

 private:
  int64_t id_of(int64_t column) const { return column_ids_.empty() ? column : column_ids_[column]; }
  ConstraintOrder order_;
  int64_t eos_ = 2;
  std::vector<int64_t> column_ids_;
  std::vector<int64_t> column_of_id_;  // empty: identity; -1: no column
  std::vector<ConstraintState> states_;  // per row
  std::vector<int64_t> row_max_len_;
};

std::unique_ptr<SearchStrategy> make_search(const SearchOptions& options);

}  // namespace csan::generation
