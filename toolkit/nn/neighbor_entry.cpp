#include "toolkit/nn/neighbor_entry.h"

#include <cmath>
#include <memory>

#include "toolkit/nn/entry_layers.h"
#include "toolkit/nn/init.h"

CSAN_REGISTRATION_ANCHOR(neighbor_entry)

namespace csan::nn {

const core::OptionTable<NeighborOptions>& neighbor_option_table() {
  static const auto table =
      core::OptionTable<NeighborOptions>()
          .add("model.neighbor.init_std", &NeighborOptions::init_std,
               "NEIGHBOR: initial standard deviation (in positions) of each head's Gaussian; learned per head", 1e-3)
          .add("model.neighbor.encoder_layers", &NeighborOptions::encoder_layers,
               "NEIGHBOR: encoder layers (0 = lowest) whose self-attention gets the diagonal Gaussian bias", 0)
          .add("model.neighbor.decoder_layers", &NeighborOptions::decoder_layers,
               "NEIGHBOR: decoder layers whose self-attention gets the bias (its left half)", 0);
  return table;
}

NeighborOptions NeighborOptions::from_config(const core::Config& cfg) { return neighbor_option_table().read(cfg); }

NeighborEntry::NeighborEntry(int64_t num_heads, double init_std) {
  std_root = register_parameter("std_root", torch::empty({num_heads}));
  init_constant(std_root, std::sqrt(init_std));
}

torch::Tensor NeighborEntry::bias(const AttentionInputs& in) {
  const torch::Tensor distance =
      (in.key_positions().unsqueeze(0) - in.query_positions().unsqueeze(1)).to(torch::kFloat);
  const torch::Tensor inverse_variance = std_root.pow(-4).view({-1, 1, 1});  // 1 / σ^2, σ = s^2
  return (distance.square() * -0.5).unsqueeze(0) * inverse_variance.unsqueeze(0);
}

namespace {

std::shared_ptr<AttentionEntry> make_neighbor_entry(const core::Config& cfg, const AttentionSite& site) {
  const NeighborOptions o = NeighborOptions::from_config(cfg);
  EntryLayers layers{"neighbor", &o.encoder_layers, &o.decoder_layers};
  layers.no_cross = "is a diagonal over one sequence's positions (self-attention only)";
  if (!applies_at(layers, site)) return nullptr;
  return std::make_shared<NeighborEntry>(site.num_heads, o.init_std);
}

core::Registrar<AttentionEntrySpec> neighbor_entry(
    attention_entry_registry(), "neighbor",
    {"NEIGHBOR (Sperber et al. 2018, CSAN Table 1): diagonal Gaussian bias with a learned width per head",
     [](core::ConfigSchema& s) { neighbor_option_table().declare(s, /*with_defaults=*/false); },
     [] { return neighbor_option_table().defaults(); }, make_neighbor_entry});

}  // namespace

}  // namespace csan::nn
