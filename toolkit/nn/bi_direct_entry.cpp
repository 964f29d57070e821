#include "toolkit/nn/bi_direct_entry.h"

#include <memory>

#include "toolkit/core/error.h"
#include "toolkit/nn/entry_layers.h"
#include "toolkit/nn/locality_bias.h"

CSAN_REGISTRATION_ANCHOR(bi_direct_entry)

namespace csan::nn {

const core::OptionTable<BiDirectOptions>& bi_direct_option_table() {
  static const auto table =
      core::OptionTable<BiDirectOptions>()
          .add("model.bi_direct.global_heads", &BiDirectOptions::global_heads,
               "BI_DIRECT: heads that keep full scope; the others alternate forward and backward masks", 0)
          .add("model.bi_direct.encoder_layers", &BiDirectOptions::encoder_layers,
               "BI_DIRECT: encoder layers (0 = lowest) whose self-attention heads get directions", 0);
  return table;
}

BiDirectOptions BiDirectOptions::from_config(const core::Config& cfg) { return bi_direct_option_table().read(cfg); }

BiDirectEntry::BiDirectEntry(int64_t num_heads, int64_t global_heads) {
  const int64_t directed = num_heads - global_heads;
  if (directed < 2 || directed % 2 != 0)
    throw Error::for_key("model.bi_direct.global_heads",
                         std::to_string(global_heads) + " of " + std::to_string(num_heads) + " heads leave " +
                             std::to_string(directed) +
                             " for forward/backward pairs; that must be a positive even number");
  head_kind_ = torch::zeros({num_heads}, torch::kLong);
  for (int64_t h = global_heads; h < num_heads; ++h) head_kind_[h] = (h - global_heads) % 2 == 0 ? 1 : 2;
}

torch::Tensor BiDirectEntry::bias(const AttentionInputs& in) {
  const auto options = torch::dtype(torch::kFloat).device(in.device());
  const torch::Tensor j = in.key_positions().unsqueeze(0), i = in.query_positions().unsqueeze(1);
  const torch::Tensor open = torch::zeros({in.query_length, in.key_length}, options);
  // Per kind of head: nothing hidden, later keys hidden (forward), earlier keys hidden (backward).
  const torch::Tensor by_kind =
      torch::stack({open, open.masked_fill(j > i, kHiddenScore), open.masked_fill(j < i, kHiddenScore)});
  return by_kind.index_select(0, head_kind_.to(in.device())).unsqueeze(0);
}

namespace {

std::shared_ptr<AttentionEntry> make_bi_direct_entry(const core::Config& cfg, const AttentionSite& site) {
  const BiDirectOptions o = BiDirectOptions::from_config(cfg);
  EntryLayers layers{"bi_direct", &o.encoder_layers};
  layers.no_decoder = "cannot be causal: its backward heads would see only the query itself";
  layers.no_cross = "masks by direction within one sequence (self-attention only)";
  if (!applies_at(layers, site)) return nullptr;
  return std::make_shared<BiDirectEntry>(site.num_heads, o.global_heads);
}

core::Registrar<AttentionEntrySpec> bi_direct_entry(
    attention_entry_registry(), "bi_direct",
    {"BI_DIRECT (Shen et al. 2018a, CSAN Table 1): forward and backward directional masks on alternating heads",
     [](core::ConfigSchema& s) { bi_direct_option_table().declare(s, /*with_defaults=*/false); },
     [] { return bi_direct_option_table().defaults(); }, make_bi_direct_entry});

}  // namespace

}  // namespace csan::nn
