#include "toolkit/nn/local_soft_entry.h"

#include <memory>

#include "toolkit/core/error.h"
#include "toolkit/nn/entry_layers.h"

CSAN_REGISTRATION_ANCHOR(local_soft_entry)

namespace csan::nn {

const core::OptionTable<LocalSoftOptions>& local_soft_option_table() {
  static const auto table =
      core::OptionTable<LocalSoftOptions>()
          .add("model.local_soft.global_heads", &LocalSoftOptions::global_heads,
               "LOCAL_SOFT: heads without the Gaussian bias (the first ones); the others predict centre and window", 0)
          .add("model.local_soft.encoder_layers", &LocalSoftOptions::encoder_layers,
               "LOCAL_SOFT: encoder layers (0 = lowest) whose self-attention gets the learned Gaussian bias", 0)
          .add("model.local_soft.decoder_layers", &LocalSoftOptions::decoder_layers,
               "LOCAL_SOFT: decoder layers whose self-attention gets the bias", 0)
          .add("model.local_soft.cross_layers", &LocalSoftOptions::cross_layers,
               "LOCAL_SOFT: decoder layers whose attention over the source gets the bias", 0);
  return table;
}

LocalSoftOptions LocalSoftOptions::from_config(const core::Config& cfg) { return local_soft_option_table().read(cfg); }

LocalSoftEntry::LocalSoftEntry(int64_t embed_dim, int64_t num_heads, int64_t global_heads)
    : num_heads_(num_heads), global_heads_(global_heads) {
  const int64_t local = num_heads - global_heads;
  if (local < 1)
    throw Error::for_key("model.local_soft.global_heads", std::to_string(global_heads) + " leaves none of the " +
                                                              std::to_string(num_heads) + " heads local");
  predictor = register_module("predictor", PositionPredictor(embed_dim, local * (embed_dim / num_heads), 2 * local));
}

torch::Tensor LocalSoftEntry::bias(const AttentionInputs& in) {
  const int64_t local = num_heads_ - global_heads_;
  const torch::Tensor predicted =
      predictor(in.q.reshape({in.q.size(0), in.query_length, -1})).transpose(1, 2).unsqueeze(-1);  // [B, 2L, Tq, 1]
  const torch::Tensor seen = visible_key_count(in);                                                // I
  const torch::Tensor centre = predicted.narrow(1, 0, local) * (seen - 1);
  const torch::Tensor window = predicted.narrow(1, local, local) * seen + 0.1;
  const torch::Tensor j = in.key_positions().to(torch::kFloat).view({1, 1, 1, -1});
  torch::Tensor gaussian = ((centre - j) / window).square() * -2.0;  // [B, L, Tq, Tk]
  if (global_heads_ == 0) return gaussian;
  return torch::cat(
      {torch::zeros({gaussian.size(0), global_heads_, in.query_length, in.key_length}, gaussian.options()), gaussian},
      1);
}

namespace {

std::shared_ptr<AttentionEntry> make_local_soft_entry(const core::Config& cfg, const AttentionSite& site) {
  const LocalSoftOptions o = LocalSoftOptions::from_config(cfg);
  if (!applies_at({"local_soft", &o.encoder_layers, &o.decoder_layers, &o.cross_layers}, site)) return nullptr;
  return std::make_shared<LocalSoftEntry>(site.embed_dim, site.num_heads, o.global_heads);
}

core::Registrar<AttentionEntrySpec> local_soft_entry(
    attention_entry_registry(), "local_soft",
    {"LOCAL_SOFT (Yang et al. 2018, CSAN Table 1): learned Gaussian bias with predicted centre and window",
     [](core::ConfigSchema& s) { local_soft_option_table().declare(s, /*with_defaults=*/false); },
     [] { return local_soft_option_table().defaults(); }, make_local_soft_entry});

}  // namespace

}  // namespace csan::nn
