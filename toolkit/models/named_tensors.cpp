#include "toolkit/models/named_tensors.h"

#include "toolkit/core/error.h"

namespace csan::models {

const torch::Tensor& NamedTensors::at(const std::string& name) const {
  auto it = fields_.find(name);
  if (it == fields_.end()) {
    std::string known;
    for (const auto& [n, t] : fields_) known += (known.empty() ? "" : ", ") + n;
    throw Error("no field '" + name + "' in the batch (fields: " + (known.empty() ? "none" : known) + ")");
  }
  return it->second;
}

std::vector<std::string> NamedTensors::names() const {
  std::vector<std::string> out;
  for (const auto& [n, t] : fields_) out.push_back(n);
  return out;
}

NamedTensors NamedTensors::to(const torch::Device& device) const {
  NamedTensors out;
  for (const auto& [n, t] : fields_) out.set(n, t.defined() ? t.to(device) : t);
  return out;
}

}  // namespace csan::models
