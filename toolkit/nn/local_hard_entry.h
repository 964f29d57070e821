// LOCAL_HARD of CSAN's Table 1 (Luong et al. 2015, local-p attention), registered as
// "local_hard": from the projected query q_i each local head predicts an aligned
// position (eq. 9, with the first author's per-head predictor; 0-based positions)
//   p_i = (I - 1) σ(v_p^T tanh(W_p q_i))
// attends only to the keys of the window [p_i - D, p_i + D], and weights the softmax
// probabilities by a Gaussian centred at p_i, not renormalized (eq. 10):
//   a_i(j) = align(q_i, k_j) exp(-(j - p_i)^2 / (2 σ^2)),   σ = D / 2.
// I is the number of keys the query sees (the sentence's length; in a causal decoder
// the query's position + 1). The window is a bias; the Gaussian transforms the
// probabilities, so LOCAL_HARD runs the general attention path. The first `global_heads`
// heads keep full scope; W_p is (local heads x head dim) x D.
// model.local_hard.form = authors selects the first author's code instead
// (baosongyang/Context-Aware-SAN, layers/attention_local.py): no window, and the Gaussian's
// logarithm is added to the local heads' logits, so the softmax renormalises:
//   a_i(j) = softmax_j(q_i k_j / sqrt(d) - (j - p_i)^2 / (2 σ^2)),   σ = D / 2.
// Keys model.local_hard.*; they have values only in recipes whose chains name local_hard.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "toolkit/core/config.h"
#include "toolkit/core/option_table.h"
#include "toolkit/nn/attention_entry.h"
#include "toolkit/nn/locality_bias.h"

namespace csan::nn {

struct LocalHardOptions {
  int64_t window = 10;  // D, the half-width (Luong et al.'s D = 10)
  int64_t global_heads = 0;
  std::string form = "window";  // window (the paper's eq. 10) | authors (their code)
  std::vector<int64_t> encoder_layers{0, 1, 2};
  std::vector<int64_t> decoder_layers;
  std::vector<int64_t> cross_layers;

  static LocalHardOptions from_config(const core::Config& cfg);
};

const core::OptionTable<LocalHardOptions>& local_hard_option_table();

class LocalHardEntry : public AttentionEntry {
 public:
  // Throws csan::Error naming model.local_hard.global_heads when no head is left local.
  // authors_form: the Gaussian on the logits, without a window (model.local_hard.form).
  LocalHardEntry(int64_t embed_dim, int64_t num_heads, int64_t global_heads, int64_t window, bool authors_form = false);

  unsigned uses() const override { return authors_form_ ? kBias : kBias | kProbabilities; }
  // The window, or in the authors' form the Gaussian's logarithm: [B, H, Tq, Tk].
  torch::Tensor bias(const AttentionInputs& in) override;
  torch::Tensor probabilities(torch::Tensor probs, const AttentionInputs& in) override;

  // p_i per local head, [B, L, Tq, 1].
  torch::Tensor centres(const AttentionInputs& in);

  PositionPredictor predictor{nullptr};  // one output per local head

 private:
  // (j - p_i) for the local heads, [B, L, Tq, Tk]; computed once per call for both hooks.
  torch::Tensor offsets(const AttentionInputs& in);

  // -(j - p_i)^2 / (2 σ^2) for the local heads, [B, L, Tq, Tk].
  torch::Tensor log_gaussian(const torch::Tensor& offsets) const;

  int64_t num_heads_, global_heads_, window_;
  bool authors_form_;
  torch::Tensor cached_q_, cached_offsets_;
};

}  // namespace csan::nn
