// Label-smoothed cross-entropy over logits with fairseq's semantics, as one fused
// autograd function. With eps the smoothing mass, V the vocabulary and eps_i = eps/(V-1):
//   loss_t = (1 - eps - eps_i) * nll_t + eps_i * smooth_t,
//   nll_t = -log p(target_t),  smooth_t = -sum_v log p(v),
// summed over non-padding positions. The gradient of this sum w.r.t. the logits is
// simply softmax - (1 - eps - eps_i) * onehot(target) - eps_i (the coefficients sum to
// one), so the backward pass reuses the one V-wide buffer the forward pass creates
// (the log-probabilities) in place: no one-hot, gather-backward or sum-backward
// temporaries as in the composed autograd graph. eps = 0 is plain cross-entropy.
#pragma once

#include <torch/torch.h>

namespace csan::training {

struct LabelSmoothedLoss {
  torch::Tensor loss;  // scalar, differentiable w.r.t. the logits (sum over tokens)
  torch::Tensor nll;   // scalar, not differentiable (sum over tokens)
};

// logits [..., V] (any float dtype; computed in fp32, or fp64 for fp64 logits), target [...] int64 with the same
// leading shape. Positions whose target is ignore_index contribute nothing.
LabelSmoothedLoss label_smoothed_cross_entropy(const torch::Tensor& logits, const torch::Tensor& target,
                                               double epsilon, int64_t ignore_index);

}  // namespace csan::training
