// The vocabulary-wide work of a beam-search step in single passes over the logits.
// The composed version (log_softmax into a new [R, V] buffer, adding the cumulative
// scores into another, topk over K*V per sentence, then gathering the chosen
// log-probabilities) reads and writes the vocabulary-wide rows about six times per
// step; here the logits are read twice (log-sum-exp, then selection) and nothing
// vocabulary-wide is written.
#pragma once

#include <cstdint>

#include <torch/torch.h>

#include "toolkit/generation/search_strategy.h"

namespace csan::generation {

// log(sum(exp(x))) of each row of x [R, V] (float) -> [R] float. A row of -inf gives -inf.
torch::Tensor row_logsumexp(const torch::Tensor& x);

// Beam search's candidates: the `width` best (cumulative[n][b] + scores[n][b][v] -
// normalizer[n][b]) over beams b and tokens v of each sentence n, best first.
// scores [N, K, V], normalizer and cumulative [N, K]; on the first step only beam 0
// extends (all beams hold the same prefix). Fewer than `width` finite candidates: the
// rest have score -inf. Float CPU tensors take one fused pass; others take the
// composed LibTorch path (also the reference the fused one is tested against).
Candidates best_extensions(const torch::Tensor& scores, const torch::Tensor& normalizer,
                           const torch::Tensor& cumulative, int64_t width, bool first_step);
Candidates best_extensions_reference(const torch::Tensor& scores, const torch::Tensor& normalizer,
                                     const torch::Tensor& cumulative, int64_t width, bool first_step);

}  // namespace csan::generation
