// Tensors by name: a batch as a task collates it ("src_tokens", "target", "words",
// "chars", "labels", ...) and the inputs a model reads from it. The trainer passes it
// along without naming a field; the task's criterion and the model read the fields they
// know, and a missing one is an error that names it.
#pragma once

#include <torch/torch.h>

#include <map>
#include <string>
#include <vector>

namespace csan::models {

class NamedTensors {
 public:
  NamedTensors() = default;
  NamedTensors(std::initializer_list<std::pair<const std::string, torch::Tensor>> fields) : fields_(fields) {}

  void set(const std::string& name, torch::Tensor tensor) { fields_[name] = std::move(tensor); }
  bool has(const std::string& name) const { return fields_.count(name) > 0; }
  // Throws csan::Error "no field 'x' (fields: a, b)".
  const torch::Tensor& at(const std::string& name) const;
  std::vector<std::string> names() const;
  NamedTensors to(const torch::Device& device) const;

  auto begin() const { return fields_.begin(); }
  auto end() const { return fields_.end(); }

 private:
  std::map<std::string, torch::Tensor> fields_;
};

}  // namespace csan::models
