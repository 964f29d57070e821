#include "toolkit/training/distributed_buckets.h"

namespace csan::training {

std::vector<GradientBucket> plan_gradient_buckets(const std::vector<torch::Tensor>& params, int64_t cap_bytes) {
  std::vector<GradientBucket> buckets;
  std::vector<int64_t> bytes;
  for (size_t i = 0; i < params.size(); ++i) {
    const auto& p = params[i];
    const int64_t size = p.numel() * static_cast<int64_t>(p.element_size());
    // Open buckets are searched from the newest, so parameters of another dtype or device
    // interleaved in the list do not break the grouping of the rest.
    GradientBucket* target = nullptr;
    for (size_t b = buckets.size(); b-- > 0;) {
      const auto& first = params[buckets[b].params.front()];
      if (first.scalar_type() == p.scalar_type() && first.device() == p.device()) {
        if (bytes[b] + size <= cap_bytes) target = &buckets[b];
        break;
      }
    }
    if (!target) {
      buckets.emplace_back();
      bytes.push_back(0);
      target = &buckets.back();
    }
    target->params.push_back(i);
    target->numel += p.numel();
    bytes[static_cast<size_t>(target - buckets.data())] += size;
  }
  for (auto& bucket : buckets) {
    const auto& first = params[bucket.params.front()];
    bucket.buffer = torch::empty({bucket.numel}, first.options().requires_grad(false));
  }
  return buckets;
}

void flatten_gradients(GradientBucket& bucket, const std::vector<torch::Tensor>& params) {
  torch::NoGradGuard no_grad;
  int64_t offset = 0;
  for (size_t i : bucket.params) {
    const auto& p = params[i];
    auto slice = bucket.buffer.narrow(0, offset, p.numel());
    if (p.grad().defined())
      slice.copy_(p.grad().reshape({-1}));
    else
      slice.zero_();
    offset += p.numel();
  }
}

void unflatten_gradients(const GradientBucket& bucket, const std::vector<torch::Tensor>& params) {
  torch::NoGradGuard no_grad;
  int64_t offset = 0;
  for (size_t i : bucket.params) {
    auto p = params[i];
    auto slice = bucket.buffer.narrow(0, offset, p.numel()).view(p.sizes());
    if (p.grad().defined())
      p.mutable_grad().copy_(slice);
    else
      p.mutable_grad() = slice.clone();
    offset += p.numel();
  }
}

}  // namespace csan::training
