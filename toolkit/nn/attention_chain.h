// The entries of one attention site in order (toolkit/nn/attention_entry.h). Scales apply
// in order, biases add up, probability transforms compose in order, value terms add up,
// output terms add up, sublayers before the attention run in order;
// at most one entry computes the attention itself, and it then takes the others' biases
// (no probability transform or value term can follow it). An empty chain is the
// Transformer's full-scope attention.
#pragma once

#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "toolkit/nn/attention_entry.h"

namespace csan::nn {

class AttentionChainImpl : public torch::nn::Module {
 public:
  // Registers `entry` as submodule `name` (so its parameters are named after it). Throws
  // csan::Error for a name given twice, a second entry that computes the attention, or a
  // probability transform / value term combined with one.
  void add(const std::string& name, std::shared_ptr<AttentionEntry> entry);

  bool empty() const { return entries_.empty(); }
  unsigned uses() const { return uses_; }
  // True when the fused and decoding kernels can run it: nothing but scales, biases and
  // the hooks outside the scores (output terms, sublayers before the attention).
  bool kernels_suffice() const {
    return (uses_ & ~(AttentionEntry::kScale | AttentionEntry::kBias | AttentionEntry::kNeedsKeys |
                      AttentionEntry::kOutput | AttentionEntry::kBefore)) == 0;
  }
  AttentionEntry* computing_entry() const { return computing_; }
  // "csan, rel_pos" ("" when empty).
  std::string names() const;

  void scale(torch::Tensor& q, torch::Tensor& k, torch::Tensor& v) const;
  // The sum of the entries' biases (undefined when none gives one).
  torch::Tensor bias(const AttentionInputs& in) const;
  torch::Tensor probabilities(torch::Tensor probs, const AttentionInputs& in) const;
  // The sum of the value terms (undefined when none).
  torch::Tensor values(const torch::Tensor& probs, const AttentionInputs& in) const;
  // The sum of the output terms (undefined when none).
  torch::Tensor output(const torch::Tensor& context, const AttentionInputs& in) const;
  // x through every entry's sublayer before the attention, in order.
  torch::Tensor before(torch::Tensor x, const BeforeInputs& in) const;

 private:
  std::vector<std::pair<std::string, std::shared_ptr<AttentionEntry>>> entries_;
  unsigned uses_ = 0;
  AttentionEntry* computing_ = nullptr;
};
TORCH_MODULE(AttentionChain);

}  // namespace csan::nn
