#include "toolkit/nn/position_matrix_entry.h"

#include "toolkit/core/error.h"
#include "toolkit/nn/entry_layers.h"
#include "toolkit/nn/keras_init.h"

CSAN_REGISTRATION_ANCHOR(position_matrix_entry)

namespace csan::nn {

const core::OptionTable<PositionMatrixOptions>& position_matrix_option_table() {
  static const auto table = core::OptionTable<PositionMatrixOptions>().add(
      "model.position_matrix.layers", &PositionMatrixOptions::layers,
      "SAN+P: self-attention layers whose logits get the t x t matrix (0 = lowest; empty: every layer)", 0);
  return table;
}

PositionMatrixEntry::PositionMatrixEntry(int64_t heads, int64_t max_positions) {
  matrix = register_parameter("matrix", torch::empty({heads, max_positions, max_positions}));
  for (int64_t h = 0; h < heads; ++h) init_glorot_normal(matrix[h], {max_positions, max_positions});
}

torch::Tensor PositionMatrixEntry::bias(const AttentionInputs& in) {
  const int64_t t = matrix.size(1);
  if (in.query_offset + in.query_length > t || in.key_length > t)
    throw Error("position_matrix: positions beyond the model's " + std::to_string(t));
  return matrix.narrow(1, in.query_offset, in.query_length).narrow(2, 0, in.key_length).unsqueeze(0);
}

namespace {

std::shared_ptr<AttentionEntry> build_position_matrix(const core::Config& cfg, const AttentionSite& site) {
  const auto o = position_matrix_option_table().read(cfg);
  if (!entry_applies_at(o.layers, site, "model.position_matrix.layers")) return nullptr;
  return std::make_shared<PositionMatrixEntry>(site.num_heads, fixed_positions(site, "position_matrix"));
}

core::Registrar<AttentionEntrySpec> position_matrix_entry(
    attention_entry_registry(), "position_matrix",
    {"SAN+P (Dufter et al. 2020): a learned t x t matrix per head added to the logits",
     [](core::ConfigSchema& s) { position_matrix_option_table().declare(s, /*with_defaults=*/false); },
     [] { return position_matrix_option_table().defaults(); }, build_position_matrix});

}  // namespace

}  // namespace csan::nn
