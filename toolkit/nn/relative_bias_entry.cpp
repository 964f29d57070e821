#include "toolkit/nn/relative_bias_entry.h"

#include <cmath>

#include "toolkit/core/error.h"
#include "toolkit/nn/entry_layers.h"
#include "toolkit/nn/keras_init.h"

CSAN_REGISTRATION_ANCHOR(relative_bias_entry)

namespace csan::nn {

const core::OptionTable<RelativeBiasOptions>& relative_bias_option_table() {
  using O = RelativeBiasOptions;
  static const auto table =
      core::OptionTable<O>()
          .add("model.relative_bias.layers", &O::layers,
               "SAN+R: self-attention layers whose logits get the relative bias (0 = lowest; empty: every layer)", 0)
          .add("model.relative_bias.form", &O::form,
               "SAN+R: directed (the paper: a_{i-j+t}) or circulant (the authors' code: the real part of a circulant "
               "operator with a learned spectrum; symmetric)",
               {"directed", "circulant"});
  return table;
}

RelativeBiasEntry::RelativeBiasEntry(int64_t heads, int64_t max_positions, bool circulant)
    : t_(max_positions), circulant_(circulant) {
  weights = register_parameter("weights", torch::empty({heads, 2 * t_}));
  for (int64_t h = 0; h < heads; ++h) init_glorot_normal(weights[h], {2 * t_});
  if (circulant_) {
    // m n reduced mod 2t first, so that large products lose no precision in the cosine.
    const auto n = torch::arange(2 * t_, torch::kLong);
    const auto phase = torch::outer(n, n).remainder(2 * t_).to(torch::kDouble) * (2 * M_PI / double(2 * t_));
    cosines_ = phase.cos().div(double(2 * t_)).to(torch::kFloat);
  }
}

torch::Tensor RelativeBiasEntry::bias(const AttentionInputs& in) {
  if (in.query_offset + in.query_length > t_ || in.key_length > t_)
    throw Error("relative_bias: positions beyond the model's " + std::to_string(t_));
  const auto distance = in.query_positions().unsqueeze(1) - in.key_positions().unsqueeze(0);  // i - j
  torch::Tensor per_distance = weights;  // directed: indexed by i - j + t
  torch::Tensor index = distance + t_;
  if (circulant_) {
    per_distance = torch::matmul(weights, cosines_.to(weights.device()));  // [H, 2t] by (i - j) mod 2t
    index = distance.remainder(2 * t_);
  }
  return per_distance.index_select(1, index.reshape({-1})).view({1, weights.size(0), in.query_length, in.key_length});
}

namespace {

std::shared_ptr<AttentionEntry> build_relative_bias(const core::Config& cfg, const AttentionSite& site) {
  const auto o = relative_bias_option_table().read(cfg);
  if (!entry_applies_at(o.layers, site, "model.relative_bias.layers")) return nullptr;
  return std::make_shared<RelativeBiasEntry>(site.num_heads, fixed_positions(site, "relative_bias"),
                                             o.form == "circulant");
}

core::Registrar<AttentionEntrySpec> relative_bias_entry(
    attention_entry_registry(), "relative_bias",
    {"SAN+R (Dufter et al. 2020): a learned bias per head and relative position added to the logits",
     [](core::ConfigSchema& s) { relative_bias_option_table().declare(s, /*with_defaults=*/false); },
     [] { return relative_bias_option_table().defaults(); }, build_relative_bias});

}  // namespace

}  // namespace csan::nn
