// Pieces the locality entries (CSAN's Table 1 baselines) share (besides the score that
// hides a key, hidden_score.h): the number of keys each query sees, and the query-conditioned predictor of
// per-head positions of Luong et al. (2015) and Yang et al. (2018).
#pragma once

#include <torch/torch.h>

#include <cstdint>

#include "toolkit/nn/attention_entry.h"
#include "toolkit/nn/dense.h"
#include "toolkit/nn/hidden_score.h"

namespace csan::nn {

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
