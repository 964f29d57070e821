// A weight [N, K] that a layer multiplies its input with, y = x Wᵀ + b: Dense, the
// attention's fused q|k|v weight, a decoder's output layer and an embedding tied to it.
// In training and fp32 decoding it is the layer's trainable parameter, multiplied by
// nn::linear. Converting a model for inference (generation/inference_precision.h) gives
// each projection a kernel that holds the weight in its precision's form
// (projection_kernel.h); the parameter then leaves its module, so the kernel's form is
// the only copy (an int8 weight packed for csan's kernel keeps nothing else).
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "toolkit/nn/projection_kernel.h"

namespace csan::nn {

class Projection {
 public:
  // x W[first, first + count)ᵀ + bias (count -1: every row). `weight` is the layer's
  // parameter [N, K]: multiplied until the projection is converted, unread after.
  torch::Tensor operator()(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias = {},
                           int64_t first = 0, int64_t count = -1) const;

  // Null until converted.
  const std::shared_ptr<const ProjectionKernel>& kernel() const { return kernel_; }
  void set_kernel(std::shared_ptr<const ProjectionKernel> kernel) { kernel_ = std::move(kernel); }

 private:
  std::shared_ptr<const ProjectionKernel> kernel_;
};

// A module that multiplies through nn::Projection. It names its projections, so that
// conversion finds every projection of a model by walking its modules.
class ProjectingModule : public torch::nn::Module {
 public:
  struct Site {
    std::string name;  // the weight parameter's name in this module: "weight", "in_proj_weight"
    torch::Tensor* weight;
    Projection* projection;
  };
  // This module's projections (not its children's).
  virtual std::vector<Site> projection_sites() = 0;

  // Gives `site` its kernel and takes the weight parameter out of the module: the kernel
  // holds the weight from now on (parameters() and checkpoints no longer list it).
  void convert(const Site& site, std::shared_ptr<const ProjectionKernel> kernel);
  // Puts `value` in the weight parameter's place (a frozen tensor): an inference
  // checkpoint's stored form of the weight, before the model is saved or loaded.
  void set_weight(const Site& site, const torch::Tensor& value);
};

// One projection of a model, named by its weight parameter's full name.
struct NamedProjection {
  std::string name;  // "decoder.layers.0.self_attn.in_proj_weight"
  ProjectingModule* module;
  ProjectingModule::Site site;
};

// Every projection of `model` in the order of its parameters; a module shared by two
// parents (a tied embedding) counts once, under its first name.
std::vector<NamedProjection> projections_of(torch::nn::Module& model);
// True when some projection of `model` holds a converted kernel.
bool has_converted_projections(torch::nn::Module& model);

}  // namespace csan::nn
