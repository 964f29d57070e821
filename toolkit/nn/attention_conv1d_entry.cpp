#include "toolkit/nn/attention_conv1d_entry.h"

#include "toolkit/core/error.h"
#include "toolkit/nn/entry_layers.h"
#include "toolkit/nn/init.h"
#include "toolkit/nn/keras_init.h"

CSAN_REGISTRATION_ANCHOR(attention_conv1d_entry)

namespace csan::nn {

const core::OptionTable<AttentionConv1dOptions>& attention_conv1d_option_table() {
  using O = AttentionConv1dOptions;
  static const auto table =
      core::OptionTable<O>()
          .add("model.attention_conv1d.layers", &O::layers,
               "SAN+Conv: self-attention layers whose probabilities are convolved (empty: every layer)", 0)
          .add("model.attention_conv1d.width", &O::width, "SAN+Conv: filter width along the query axis (odd)", 1);
  return table;
}

AttentionConv1dEntry::AttentionConv1dEntry(int64_t heads, int64_t max_positions, int64_t width) {
  const int64_t t = max_positions;
  weight = register_parameter("weight", torch::empty({heads * t, t, width}));
  bias = register_parameter("bias", torch::empty({heads * t}));
  // Keras's kernel (width, t keys, t filters) per head; its fans are the same per head.
  for (int64_t h = 0; h < heads; ++h) init_glorot_uniform(weight.narrow(0, h * t, t), {width, t, t});
  init_constant(bias, 0.0);
}

torch::Tensor AttentionConv1dEntry::probabilities(torch::Tensor probs, const AttentionInputs& in) {
  const int64_t batch = probs.size(0), heads = probs.size(1), tq = probs.size(2), tk = probs.size(3);
  const int64_t t = weight.size(1), width = weight.size(2);
  if (tk > t) throw Error("attention_conv1d: " + std::to_string(tk) + " keys, but filters for " + std::to_string(t));
  torch::Tensor w = weight, b = bias;
  if (tk < t) {
    w = weight.view({heads, t, t, width}).narrow(1, 0, tk).narrow(2, 0, tk).reshape({heads * tk, tk, width});
    b = bias.view({heads, t}).narrow(1, 0, tk).reshape({heads * tk});
  }
  // Keys are channels, queries the convolved axis: [B, H * Tk, Tq], one group per head.
  auto x = zero_padded_queries(probs, in).transpose(2, 3).reshape({batch, heads * tk, tq});
  auto y = torch::conv1d(x, w.to(x.scalar_type()), b.to(x.scalar_type()), 1, width / 2, 1, heads);
  return zero_padded_keys(torch::relu(y.view({batch, heads, tk, tq}).transpose(2, 3)), in);
}

namespace {

std::shared_ptr<AttentionEntry> build_attention_conv1d(const core::Config& cfg, const AttentionSite& site) {
  const auto o = attention_conv1d_option_table().read(cfg);
  if (o.width % 2 == 0) throw Error::for_key("model.attention_conv1d.width", "must be odd ('same' padding)");
  if (!entry_applies_at(o.layers, site, "model.attention_conv1d.layers")) return nullptr;
  return std::make_shared<AttentionConv1dEntry>(site.num_heads, fixed_positions(site, "attention_conv1d"), o.width);
}

core::Registrar<AttentionEntrySpec> attention_conv1d_entry(
    attention_entry_registry(), "attention_conv1d",
    {"SAN+Conv (Dufter et al. 2020): relu(Conv1D) of each head's attention probabilities, t filters",
     [](core::ConfigSchema& s) { attention_conv1d_option_table().declare(s, /*with_defaults=*/false); },
     [] { return attention_conv1d_option_table().defaults(); }, build_attention_conv1d});

}  // namespace

}  // namespace csan::nn
