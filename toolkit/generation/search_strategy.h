// How the next tokens are chosen from the (processed) log-probabilities: beam search
// keeps the best extensions of all beams, sampling draws one token per beam. Greedy
// decoding is beam search with one beam.
#pragma once

#include <cstdint>
#include <memory>

#include <torch/torch.h>

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

std::unique_ptr<SearchStrategy> make_search(const SearchOptions& options);

}  // namespace csan::generation
