// A small cache of the tensors CSAN derives from shapes and the padding mask alone: the
// additive window bias (0 where a query may look, -inf elsewhere) and the head tables of
// the 2-D area. The windowed encoder layers of one forward pass see the same lengths and
// the same padding mask, so the first layer builds them and the others reuse them.
//
// An entry matches on its shape key (sizes, window, dtype, device: whatever the caller
// packs into it) AND on the padding it was built from: the very same mask tensor at the
// same version, or else a mask with equal contents. A new batch, a mask changed in place
// or a different slice of one mask therefore never reuses a wrong bias. Thread-safe; a
// few entries, least recently used dropped first.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <vector>

#include <torch/torch.h>

namespace csan::nn {

class CsanMaskCache {
 public:
  explicit CsanMaskCache(size_t capacity = 8) : capacity_(capacity) {}

  // The tensor stored under (shape_key, padding.narrow(1, first, length)), or build()'s
  // result, stored. padding: [B, T] bool or undefined (no padding; then first/length are
  // part of nothing). The returned tensor is shared: never modify it in place.
  torch::Tensor get(const std::vector<int64_t>& shape_key, const torch::Tensor& padding, int64_t first,
                    int64_t length, const std::function<torch::Tensor()>& build);

  size_t hits() const;
  size_t misses() const;
  void clear();  // drops every entry (the counters stay)

  // The cache the CSAN scopes of this process share, so that the layers of one model
  // (and the models of an ensemble) reuse each other's masks.
  static std::shared_ptr<CsanMaskCache> shared();

 private:
  struct Entry {
    std::vector<int64_t> shape_key;
    torch::Tensor source;  // the caller's mask (kept alive so its identity stays unique)
    int64_t source_version = -1;
    int64_t first = 0, length = 0;
    torch::Tensor padding;  // a private copy of the slice, for comparing contents
    torch::Tensor value;
  };
  bool matches(const Entry& e, const std::vector<int64_t>& shape_key, const torch::Tensor& padding, int64_t first,
               int64_t length) const;

  size_t capacity_;
  std::list<Entry> entries_;  // most recently used first
  size_t hits_ = 0, misses_ = 0;
  mutable std::mutex mutex_;
};

}  // namespace csan::nn
