#include "toolkit/nn/csan_mask_cache.h"

#include <memory>

namespace csan::nn {

namespace {

// Inference tensors carry no version counter: such a mask is compared by contents.
int64_t version_of(const torch::Tensor& t) { return t.is_inference() ? -1 : static_cast<int64_t>(t._version()); }

}  // namespace

bool CsanMaskCache::matches(const Entry& e, const std::vector<int64_t>& shape_key, const torch::Tensor& padding,
                            int64_t first, int64_t length) const {
  if (e.shape_key != shape_key) return false;
  if (!padding.defined() || !e.padding.defined()) return padding.defined() == e.padding.defined();
  if (padding.device() != e.padding.device() || padding.size(0) != e.padding.size(0) || length != e.length)
    return false;
  const int64_t version = version_of(padding);
  if (padding.is_same(e.source) && version >= 0 && version == e.source_version && first == e.first) return true;
  return torch::equal(padding.narrow(1, first, length), e.padding);
}

torch::Tensor CsanMaskCache::get(const std::vector<int64_t>& shape_key, const torch::Tensor& padding, int64_t first,
                                 int64_t length, const std::function<torch::Tensor()>& build) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = entries_.begin(); it != entries_.end(); ++it)
    if (matches(*it, shape_key, padding, first, length)) {
      ++hits_;
      entries_.splice(entries_.begin(), entries_, it);
      return it->value;
    }
  ++misses_;
  Entry e;
  e.shape_key = shape_key;
  if (padding.defined()) {
    e.source = padding;
    e.source_version = version_of(padding);
    e.first = first, e.length = length;
    e.padding = padding.narrow(1, first, length).clone();
  }
  e.value = build();
  entries_.push_front(std::move(e));
  if (entries_.size() > capacity_) entries_.pop_back();
  return entries_.front().value;
}

size_t CsanMaskCache::hits() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return hits_;
}

size_t CsanMaskCache::misses() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return misses_;
}

void CsanMaskCache::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  entries_.clear();
}

std::shared_ptr<CsanMaskCache> CsanMaskCache::shared() {
  static const auto cache = std::make_shared<CsanMaskCache>();
  return cache;
}

}  // namespace csan::nn
