#include "toolkit/nn/projection.h"

#include <set>

#include "toolkit/nn/linear.h"

namespace csan::nn {

torch::Tensor Projection::operator()(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias,
                                     int64_t first, int64_t count) const {
  if (kernel_) return kernel_->multiply(x, bias, first, count < 0 ? kernel_->rows() - first : count);
  return linear(x, count < 0 ? weight : weight.narrow(0, first, count), bias);
}

void ProjectingModule::convert(const Site& site, std::shared_ptr<const ProjectionKernel> kernel) {
  site.projection->set_kernel(std::move(kernel));
  *site.weight = torch::Tensor();
  // An undefined parameter is one the module does not have (as an absent bias).
  parameters_[site.name] = torch::Tensor();
}

void ProjectingModule::set_weight(const Site& site, const torch::Tensor& value) {
  torch::Tensor frozen = value.detach();
  *site.weight = frozen;
  parameters_[site.name] = frozen;
}

std::vector<NamedProjection> projections_of(torch::nn::Module& model) {
  std::vector<NamedProjection> found;
  std::set<const Projection*> seen;
  auto visit = [&](const std::string& prefix, torch::nn::Module& module) {
    auto* holder = dynamic_cast<ProjectingModule*>(&module);
    if (!holder) return;
    for (const auto& site : holder->projection_sites())
      if (seen.insert(site.projection).second)
        found.push_back({prefix.empty() ? site.name : prefix + "." + site.name, holder, site});
  };
  visit("", model);
  for (const auto& child : model.named_modules("", /*include_self=*/false)) visit(child.key(), *child.value());
  return found;
}

bool has_converted_projections(torch::nn::Module& model) {
  for (const auto& p : projections_of(model))
    if (p.site.projection->kernel()) return true;
  return false;
}

}  // namespace csan::nn
