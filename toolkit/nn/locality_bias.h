// Pieces the locality entries (CSAN's Table 1 baselines) share: the score that hides a
// key, the number of keys each query sees, and the query-conditioned predictor of
// per-head positions of Luong et al. (2015) and Yang et al. (2018).
#pragma once

#include <torch/torch.h>

#include <cstdint>

#include "toolkit/nn/attention_entry.h"
#include "toolkit/nn/dense.h"

namespace csan::nn {

// Added to the score of a key a mask hides. Finite, as in the first author's code
// (-1e9): a query whose every key is hidden (a padding position's backward direction or
// empty block) then averages its visible keys instead of producing NaN, while any
// visible key still takes all of the probability (exp(-1e9) is 0 in float).
constexpr double kHiddenScore = -1e9;

// I of Yang et al. (2018): how many keys each query sees, [Bq or 1, 1, Tq, 1] float:
// the keys that are not padding, and in causal self-attention only those up to the
// query's position (so a decoder's values do not change as it grows). Bq is the number
// of query rows (beams included).
torch::Tensor visible_key_count(const AttentionInputs& in);

// σ(W_2 tanh(W_1 q + b_1) + b_2): `outputs` values in (0, 1) per query from the projected
// query q [B, Tq, D], hidden width `hidden` (the first author's code: local heads x head
// dimension). Weights Xavier-uniform, biases zero.
class PositionPredictorImpl : public torch::nn::Module {
 public:
  PositionPredictorImpl(int64_t embed_dim, int64_t hidden, int64_t outputs);
  torch::Tensor forward(const torch::Tensor& q);  // [B, Tq, outputs]

  Dense hidden{nullptr}, out{nullptr};
};
TORCH_MODULE(PositionPredictor);

}  // namespace csan::nn
