// What a precision does to a model's projections: a projection kind, registered under the
// precision's name where its kernel is defined (*_projection.cpp). Converting a model for
// inference asks the kind of its precision for one kernel per projection; an inference
// checkpoint stores each kernel's weight and gets it back through the same kind. A new
// precision (fp8, int4) is one more kernel and its registration; a test checks that every
// nn::Precision has one.
#pragma once

#include <torch/torch.h>

#include <functional>
#include <memory>
#include <string>

#include "toolkit/core/registry.h"
#include "toolkit/nn/precision.h"
#include "toolkit/nn/projection_kernel.h"

namespace csan::nn {

struct ProjectionKind {
  Precision precision;
  // The kernel of a float weight [N, K] (rounded, quantized, packed). Empty for fp32: the
  // projection keeps its trainable parameter.
  std::function<std::shared_ptr<const ProjectionKernel>(const torch::Tensor& weight)> convert;
  // The kernel of an inference checkpoint's stored weight (stored_weight()) and scales
  // (scales(); undefined where the kind has none). Empty where checkpoints cannot hold the kind.
  std::function<std::shared_ptr<const ProjectionKernel>(const torch::Tensor& stored, const torch::Tensor& scales)>
      restore;
  torch::ScalarType stored_type = torch::kFloat;  // what an inference checkpoint holds per weight
  bool stored_with_scales = false;                // and whether per-row scales come with it
  bool on_cpu = true, on_cuda = true;             // where its products run
  // The /proc/cpuinfo flag that makes its CPU products fast ("" where none is needed), and
  // what happens without it (for the warning).
  std::string fast_cpu_flag;
  std::function<std::string()> without_cpu_flag;
};

core::Registry<ProjectionKind>& projection_kinds();
// The kind registered for `precision`; throws csan::Error when there is none.
const ProjectionKind& projection_kind(Precision precision);

}  // namespace csan::nn
