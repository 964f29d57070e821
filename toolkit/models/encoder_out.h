// An encoder's output as named memories, each with its padding mask: "encoder" for the
// Transformer and CSAN; "left" and "right" for a model with two encoder branches, whose
// decoder attentions may take keys from one memory and values from another. One
// reorder() serves beam search (sentences leaving the batch) and ensembles.
#pragma once

#include <torch/torch.h>

#include <string>
#include <utility>
#include <vector>

namespace csan::models {

struct Memory {
  torch::Tensor out;           // [B, S, D]
  torch::Tensor padding_mask;  // [B, S] bool, true at padding; undefined: no padding
};

class EncoderOut {
 public:
  EncoderOut() = default;
  // The common case: one memory named "encoder".
  EncoderOut(torch::Tensor out, torch::Tensor padding_mask) {
    add("encoder", {std::move(out), std::move(padding_mask)});
  }

  // Throws csan::Error for a name given twice.
  void add(const std::string& name, Memory memory);
  bool has(const std::string& name) const;
  // Throws csan::Error "no encoder memory 'x' (memories: a, b)".
  const Memory& at(const std::string& name) const;
  Memory& at(const std::string& name);
  const std::vector<std::pair<std::string, Memory>>& memories() const { return memories_; }

  // Keeps rows new_order [B'] of every memory and mask.
  void reorder(const torch::Tensor& new_order);
  // Drops padding masks that mask nothing, so attention skips them (checked once per
  // batch instead of at every decoding step).
  void drop_empty_masks();

 private:
  std::vector<std::pair<std::string, Memory>> memories_;
};

}  // namespace csan::models
