// SAN+Temp (Dufter et al. 2020, Sec. 2.4): learnable temperature. Each head multiplies
// its projections X W_q, X W_k, X W_v by learned scalars gamma_q, gamma_k, gamma_v
// (initialized to 1; gamma_k gamma_q acts as the softmax's inverse temperature), in
// every layer: 3 parameters per head per layer. Registered as the attention entry
// "temperature"; keys model.temperature.*.
#pragma once

#include <cstdint>
#include <vector>

#include "toolkit/core/option_table.h"
#include "toolkit/nn/attention_entry.h"

namespace csan::nn {

struct TemperatureOptions {
  std::vector<int64_t> layers;  // empty: every layer, as the paper
};
const core::OptionTable<TemperatureOptions>& temperature_option_table();

class TemperatureEntry : public AttentionEntry {
 public:
  explicit TemperatureEntry(int64_t heads);
  unsigned uses() const override { return kScale; }
  void scale(torch::Tensor& q, torch::Tensor& k, torch::Tensor& v) override;

  torch::Tensor gammas;  // [3, H]: rows q, k, v
};

}  // namespace csan::nn
