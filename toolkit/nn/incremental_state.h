// Cached per-layer tensors for incremental decoding. Two kinds of entries:
//  - growing (self-attention keys/values of the prefix, [R, H, T, d], one row per
//    hypothesis): preallocated, each step's positions written in place, so a step never
//    copies the prefix to append to it;
//  - fixed (encoder-side keys/values projected once, [N, H, S, d]): one row per
//    sentence. In beam search the R = N * beam hypotheses of the N sentences share them
//    (MultiheadAttention groups the beams' queries), so reordering beams never copies
//    them; they are selected only when sentences leave the batch.
#pragma once

#include <algorithm>
#include <string>
#include <unordered_map>

#include <torch/torch.h>

namespace csan::nn {

class IncrementalState {
 public:
  // Positions the growing entries are allocated for when first written (they still
  // grow past it). Untouched capacity costs address space only, not memory.
  void reserve(int64_t positions) { reserved_ = std::max<int64_t>(positions, 1); }

  bool has(const std::string& key) const { return fixed_.count(key) > 0 || growing_.count(key) > 0; }
  // A fixed entry, or the filled positions of a growing one (a view into its buffer).
  torch::Tensor at(const std::string& key) const {
    const auto g = growing_.find(key);
    return g != growing_.end() ? g->second.filled() : fixed_.at(key);
  }
  void set(const std::string& key, torch::Tensor value) { fixed_[key] = std::move(value); }

  // Writes positions [R, H, t, d] after the filled ones of a growing entry (dim 2) and
  // returns all filled positions [R, H, T + t, d].
  torch::Tensor append(const std::string& key, const torch::Tensor& positions) {
    Growing& g = growing_[key];
    TORCH_CHECK(!g.buffer.defined() || positions.size(0) == g.rows, "incremental state '", key, "': ",
                positions.size(0), " rows appended to ", g.rows);
    const int64_t rows = positions.size(0), needed = g.length + positions.size(2);
    if (!g.buffer.defined() || needed > g.buffer.size(2)) {
      // First write, or past the reserve: reallocate with room to spare (amortized).
      const int64_t capacity = std::max(needed, g.buffer.defined() ? 2 * g.buffer.size(2) : reserved_);
      torch::Tensor bigger = torch::empty({rows, positions.size(1), capacity, positions.size(3)}, positions.options());
      if (g.length > 0) bigger.narrow(2, 0, g.length).copy_(g.filled());
      g.buffer = bigger;
      g.spare = torch::Tensor();
      g.rows = rows;
    }
    g.buffer.narrow(0, 0, g.rows).narrow(2, g.length, positions.size(2)).copy_(positions);
    g.length = needed;
    return g.filled();
  }

  // One row per sentence (no shared rows): keeps rows new_order [R'] of every entry.
  void reorder(const torch::Tensor& new_order) {
    for (auto& [key, g] : growing_) g.reorder(new_order);
    for (auto& [key, t] : fixed_) t = t.index_select(0, new_order);
  }
  // Beam search: rows new_order [R'] of the growing entries; the fixed (per-sentence)
  // entries keep sentences [N'] when given (sentences left the batch), else stay as
  // they are (beams moved within their sentences).
  void reorder_beams(const torch::Tensor& new_order, const torch::Tensor& sentences = {}) {
    for (auto& [key, g] : growing_) g.reorder(new_order);
    if (sentences.defined())
      for (auto& [key, t] : fixed_) t = t.index_select(0, sentences);
  }
  void clear() {
    fixed_.clear();
    growing_.clear();
  }

 private:
  struct Growing {
    torch::Tensor buffer;  // [rows capacity, H, positions capacity, d]
    torch::Tensor spare;   // same shape: where the next reorder writes, then swapped
    int64_t rows = 0, length = 0;

    torch::Tensor filled() const { return buffer.narrow(0, 0, rows).narrow(2, 0, length); }
    void reorder(const torch::Tensor& new_order) {
      const int64_t kept = new_order.size(0);
      if (!spare.defined() || kept > spare.size(0))
        spare = torch::empty({std::max(kept, buffer.size(0)), buffer.size(1), buffer.size(2), buffer.size(3)},
                             buffer.options());
      torch::Tensor target = spare.narrow(0, 0, kept).narrow(2, 0, length);
      torch::index_select_out(target, filled(), 0, new_order);
      std::swap(buffer, spare);
      rows = kept;
    }
  };

  int64_t reserved_ = 16;
  std::unordered_map<std::string, torch::Tensor> fixed_;
  std::unordered_map<std::string, Growing> growing_;
};

}  // namespace csan::nn
