#include "toolkit/nn/attention_conv2d_entry.h"

#include "toolkit/core/error.h"
#include "toolkit/nn/depthwise_conv.h"
#include "toolkit/nn/entry_layers.h"
#include "toolkit/nn/init.h"
#include "toolkit/nn/keras_init.h"

CSAN_REGISTRATION_ANCHOR(attention_conv2d_entry)

namespace csan::nn {

const core::OptionTable<AttentionConv2dOptions>& attention_conv2d_option_table() {
  using O = AttentionConv2dOptions;
  static const auto table =
      core::OptionTable<O>()
          .add("model.attention_conv2d.layers", &O::layers,
               "SAN+Conv2d: self-attention layers whose probabilities are convolved (empty: every layer)", 0)
          .add("model.attention_conv2d.width", &O::width, "SAN+Conv2d: the filter is width x width (odd)", 1);
  return table;
}

AttentionConv2dEntry::AttentionConv2dEntry(int64_t heads, int64_t width) {
  weight = register_parameter("weight", torch::empty({heads, 1, width, width}));
  bias = register_parameter("bias", torch::empty({heads}));
  for (int64_t h = 0; h < heads; ++h) init_glorot_uniform(weight[h], {width, width, 1, 1});
  init_constant(bias, 0.0);
}

torch::Tensor AttentionConv2dEntry::probabilities(torch::Tensor probs, const AttentionInputs& in) {
  // Each head's [Tq, Tk] matrix is one channel with its own filter.
  return zero_padded_keys(relu_depthwise_conv2d(zero_padded_queries(probs, in), weight, bias), in);
}

namespace {

std::shared_ptr<AttentionEntry> build_attention_conv2d(const core::Config& cfg, const AttentionSite& site) {
  const auto o = attention_conv2d_option_table().read(cfg);
  if (o.width % 2 == 0) throw Error::for_key("model.attention_conv2d.width", "must be odd ('same' padding)");
  if (!entry_applies_at(o.layers, site, "model.attention_conv2d.layers")) return nullptr;
  return std::make_shared<AttentionConv2dEntry>(site.num_heads, o.width);
}

core::Registrar<AttentionEntrySpec> attention_conv2d_entry(
    attention_entry_registry(), "attention_conv2d",
    {"SAN+Conv2d (Dufter et al. 2020): relu(3 x 3 Conv2D) of each head's attention probabilities",
     [](core::ConfigSchema& s) { attention_conv2d_option_table().declare(s, /*with_defaults=*/false); },
     [] { return attention_conv2d_option_table().defaults(); }, build_attention_conv2d});

}  // namespace

}  // namespace csan::nn
