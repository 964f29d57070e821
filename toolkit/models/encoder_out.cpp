#include "toolkit/models/encoder_out.h"

#include "toolkit/core/error.h"

namespace csan::models {

void EncoderOut::add(const std::string& name, Memory memory) {
  if (has(name)) throw Error("encoder memory '" + name + "' is added twice");
  memories_.emplace_back(name, std::move(memory));
}

bool EncoderOut::has(const std::string& name) const {
  for (const auto& [n, m] : memories_)
    if (n == name) return true;
  return false;
}

const Memory& EncoderOut::at(const std::string& name) const {
  for (const auto& [n, m] : memories_)
    if (n == name) return m;
  std::string known;
  for (const auto& [n, m] : memories_) known += (known.empty() ? "" : ", ") + n;
  throw Error("no encoder memory '" + name + "' (memories: " + (known.empty() ? "none" : known) + ")");
}

Memory& EncoderOut::at(const std::string& name) {
  return const_cast<Memory&>(static_cast<const EncoderOut&>(*this).at(name));
}

void EncoderOut::reorder(const torch::Tensor& new_order) {
  for (auto& [name, m] : memories_) {
    m.out = m.out.index_select(0, new_order);
    if (m.padding_mask.defined()) m.padding_mask = m.padding_mask.index_select(0, new_order);
  }
}

void EncoderOut::drop_empty_masks() {
  for (auto& [name, m] : memories_)
    if (m.padding_mask.defined() && !m.padding_mask.any().item<bool>()) m.padding_mask = torch::Tensor();
}

}  // namespace csan::models
