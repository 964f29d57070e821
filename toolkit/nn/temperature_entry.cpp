#include "toolkit/nn/temperature_entry.h"

#include "toolkit/nn/entry_layers.h"
#include "toolkit/nn/init.h"

CSAN_REGISTRATION_ANCHOR(temperature_entry)

namespace csan::nn {

const core::OptionTable<TemperatureOptions>& temperature_option_table() {
  static const auto table = core::OptionTable<TemperatureOptions>().add(
      "model.temperature.layers", &TemperatureOptions::layers,
      "SAN+Temp: self-attention layers with learnable q/k/v scalars per head (empty: every layer)", 0);
  return table;
}

TemperatureEntry::TemperatureEntry(int64_t heads) {
  gammas = register_parameter("gammas", torch::empty({3, heads}));
  init_constant(gammas, 1.0);
}

void TemperatureEntry::scale(torch::Tensor& q, torch::Tensor& k, torch::Tensor& v) {
  // [.., T, H*d] times each head's scalar, repeated over its d channels.
  const int64_t heads = gammas.size(1);
  auto per_channel = [&](const torch::Tensor& x, int64_t row) {
    const int64_t head_dim = x.size(-1) / heads;
    return x * gammas[row].repeat_interleave(head_dim).to(x.scalar_type());
  };
  q = per_channel(q, 0);
  if (k.defined()) k = per_channel(k, 1);
  if (v.defined()) v = per_channel(v, 2);
}

namespace {

std::shared_ptr<AttentionEntry> build_temperature(const core::Config& cfg, const AttentionSite& site) {
  const auto o = temperature_option_table().read(cfg);
  if (!entry_applies_at(o.layers, site, "model.temperature.layers")) return nullptr;
  return std::make_shared<TemperatureEntry>(site.num_heads);
}

core::Registrar<AttentionEntrySpec> temperature_entry(
    attention_entry_registry(), "temperature",
    {"SAN+Temp (Dufter et al. 2020): learned per-head scalars on q, k and v",
     [](core::ConfigSchema& s) { temperature_option_table().declare(s, /*with_defaults=*/false); },
     [] { return temperature_option_table().defaults(); }, build_temperature});

}  // namespace

}  // namespace csan::nn
