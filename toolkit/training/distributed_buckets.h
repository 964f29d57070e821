// Gradient buckets for data-parallel all-reduce: parameters are grouped, in order, into
// contiguous buffers of about bucket_cap bytes (one dtype and device per bucket), so a
// model costs a handful of collectives per update instead of one per parameter.
#pragma once

#include <cstdint>
#include <vector>

#include <torch/torch.h>

namespace csan::training {

struct GradientBucket {
  std::vector<size_t> params;  // indices into the parameter list
  int64_t numel = 0;
  torch::Tensor buffer;  // flat, allocated once and reused every update
};

// A parameter larger than the cap gets a bucket of its own; the plan depends only on
// shapes, dtypes and order, so every rank computes the same one.
std::vector<GradientBucket> plan_gradient_buckets(const std::vector<torch::Tensor>& params, int64_t cap_bytes);

// Copies the parameters' gradients into the bucket's buffer (zeros where a parameter has
// no gradient yet, e.g. a rank whose micro-batches were all padding).
void flatten_gradients(GradientBucket& bucket, const std::vector<torch::Tensor>& params);
// Copies the buffer back into the gradients, creating missing ones.
void unflatten_gradients(const GradientBucket& bucket, const std::vector<torch::Tensor>& params);

}  // namespace csan::training
