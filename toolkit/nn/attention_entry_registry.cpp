#include "toolkit/nn/attention_entry.h"

namespace csan::anchors {
void link_nn();
}  // namespace csan::anchors

namespace csan::nn {

torch::Tensor AttentionInputs::query_positions() const {
  return torch::arange(query_offset, query_offset + query_length, torch::dtype(torch::kLong).device(device()));
}

torch::Tensor AttentionInputs::key_positions() const {
  return torch::arange(key_length, torch::dtype(torch::kLong).device(device()));
}

core::Registry<AttentionEntrySpec>& attention_entry_registry() {
  csan::anchors::link_nn();
  static core::Registry<AttentionEntrySpec> registry("attention entry");
  return registry;
}

}  // namespace csan::nn
