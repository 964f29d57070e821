#include "toolkit/generation/search_strategy.h"

#include <ATen/CPUGeneratorImpl.h>

#include <limits>

#include "toolkit/generation/vocab_kernels.h"

namespace csan::generation {

Candidates BeamSearch::step(int64_t step, const torch::Tensor& scores, const torch::Tensor& normalizer,
                            const torch::Tensor& cumulative) {
  return best_extensions(scores, normalizer, cumulative, 2 * scores.size(1), step == 0);
}

Sampling::Sampling(int64_t topk, double topp, uint64_t seed)
    : topk_(topk), topp_(topp), generator_(at::make_generator<at::CPUGeneratorImpl>(seed)) {}

void Sampling::reseed(uint64_t seed) { generator_.set_current_seed(seed); }

torch::Tensor Sampling::draw(const torch::Tensor& probs, int64_t count) {
  // A row with nothing allowed (every token forbidden) would make multinomial throw;
  // such a row's draw is ignored anyway (its score is -inf).
  torch::Tensor safe = probs.clone();
  safe.select(1, 0).add_(safe.sum(1).eq(0).to(safe.scalar_type()));
  return torch::multinomial(safe, count, /*replacement=*/true, generator_);
}

Candidates Sampling::step(int64_t step, const torch::Tensor& scores, const torch::Tensor& normalizer,
                          const torch::Tensor& cumulative) {
  const torch::Tensor lprobs_in = scores - normalizer.unsqueeze(2);
  const int64_t n = lprobs_in.size(0), k = lprobs_in.size(1), v = lprobs_in.size(2);
  torch::Tensor lprobs = (step == 0 ? lprobs_in.narrow(1, 0, 1) : lprobs_in).reshape({-1, v}).to(torch::kCPU);
  torch::Tensor probs = lprobs.exp();
  torch::Tensor sorted_index;  // set when the draw runs over a sorted, truncated list
  if (topk_ > 0 || topp_ > 0) {
    auto [sorted, index] = torch::sort(probs, -1, /*descending=*/true);
    if (topk_ > 0 && topk_ < v) sorted.narrow(1, topk_, v - topk_).zero_();
    if (topp_ > 0) {
      // Keep a token while the mass before it is below p (the one crossing p stays).
      torch::Tensor before = sorted.cumsum(1) - sorted;
      sorted.masked_fill_(before.ge(topp_), 0);
    }
    probs = sorted, sorted_index = index;
  }
  torch::Tensor tokens = step == 0 ? draw(probs, k) : draw(probs, 1);  // [n, k] or [n*k, 1]
  if (sorted_index.defined()) tokens = sorted_index.gather(1, tokens);
  torch::Tensor token_lprobs = lprobs.gather(1, tokens);
  tokens = tokens.reshape({n, k}), token_lprobs = token_lprobs.reshape({n, k});
  auto device = lprobs_in.device();
  torch::Tensor beams = torch::arange(k, torch::kLong).repeat({n, 1});
  if (step == 0) beams.zero_();
  return {token_lprobs.to(device) + (step == 0 ? torch::zeros_like(cumulative) : cumulative), tokens.to(device),
          beams.to(device), token_lprobs.to(device)};
}

std::unique_ptr<SearchStrategy> make_search(const SearchOptions& options) {
  if (options.sampling) return std::make_unique<Sampling>(options.sampling_topk, options.sampling_topp, options.seed);
  return std::make_unique<BeamSearch>();
}

}  // namespace csan::generation
