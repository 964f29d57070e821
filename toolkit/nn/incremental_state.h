// Cached per-layer tensors for incremental decoding (self-attention keys/values of the
// prefix, encoder-side keys/values projected once per sentence). Beam search reorders
// every cached tensor along the batch dimension when hypotheses are reordered.
#pragma once

#include <string>
#include <unordered_map>

#include <torch/torch.h>

namespace csan::nn {

class IncrementalState {
 public:
  bool has(const std::string& key) const { return buffers_.count(key) > 0; }
  torch::Tensor& at(const std::string& key) { return buffers_.at(key); }
  void set(const std::string& key, torch::Tensor value) { buffers_[key] = std::move(value); }
  // Keeps rows new_order (LongTensor [B']) of every cached tensor (batch is dim 0).
  void reorder(const torch::Tensor& new_order) {
    for (auto& [key, t] : buffers_) t = t.index_select(0, new_order);
  }
  void clear() { buffers_.clear(); }

 private:
  std::unordered_map<std::string, torch::Tensor> buffers_;
};

}  // namespace csan::nn
