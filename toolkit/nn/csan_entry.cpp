#include "toolkit/nn/csan_entry.h"

#include <algorithm>
#include <memory>

#include "toolkit/core/error.h"
#include "toolkit/nn/entry_layers.h"

CSAN_REGISTRATION_ANCHOR(csan_entry)

namespace csan::nn {

const core::OptionTable<CsanOptions>& csan_option_table() {
  using core::Value;
  static const auto table =
      core::OptionTable<CsanOptions>()
          .add_custom(
              {"model.csan.window",
               core::ValueType::Int,
               std::nullopt,
               "CSAN: M+1 positions each query sees, centred on it (odd)",
               1,
               std::nullopt,
               {}},
              [](const CsanOptions& o) { return Value(o.window.window); },
              [](CsanOptions& o, const Value& v) { o.window.window = std::get<int64_t>(v); })
          .add_custom(
              {"model.csan.head_window",
               core::ValueType::Int,
               std::nullopt,
               "CSAN: N+1 adjacent heads attended jointly (odd; 1: 1-D CSAN)",
               1,
               std::nullopt,
               {}},
              [](const CsanOptions& o) { return Value(o.window.head_window); },
              [](CsanOptions& o, const Value& v) { o.window.head_window = std::get<int64_t>(v); })
          .add_custom(
              {"model.csan.head_boundary",
               core::ValueType::String,
               std::nullopt,
               "CSAN 2-D area at the first/last head: truncate (fewer heads), wrap (ring), "
               "authors (keys wrap, values clamp, as the first author's code)",
               std::nullopt,
               std::nullopt,
               {"truncate", "wrap", "authors"}},
              [](const CsanOptions& o) { return Value(head_boundary_name(o.window.head_boundary)); },
              [](CsanOptions& o, const Value& v) {
                o.window.head_boundary = parse_head_boundary(std::get<std::string>(v));
              })
          .add("model.csan.encoder_layers", &CsanOptions::encoder_layers,
               "CSAN: encoder layers (0 = lowest) whose self-attention is windowed", 0)
          .add("model.csan.decoder_layers", &CsanOptions::decoder_layers,
               "CSAN: decoder layers whose self-attention gets the left half of the window", 0)
          .add("model.csan.banded_from_length", &CsanOptions::banded_from_length,
               "CSAN: use the banded O(I*M) computation from this many keys on (shorter: masked dense); "
               "0: the measured crossover, 16 windows for 1-D and 9 for 2-D",
               0);
  return table;
}

CsanOptions CsanOptions::from_config(const core::Config& cfg) {
  CsanOptions o = csan_option_table().read(cfg);
  if (o.window.window % 2 == 0)
    throw Error::for_key("model.csan.window",
                         "must be odd (M+1 positions centred on the query), got " + std::to_string(o.window.window));
  if (o.window.head_window % 2 == 0)
    throw Error::for_key("model.csan.head_window", "must be odd (N+1 heads centred on the query's head), got " +
                                                       std::to_string(o.window.head_window));
  return o;
}

CsanEntry::CsanEntry(const CsanWindow& window, int64_t banded_from_length, CsanPath path,
                     std::shared_ptr<CsanMaskCache> masks)
    : window_(window), banded_from_length_(banded_from_length), path_(path), masks_(std::move(masks)) {}

torch::Tensor CsanEntry::attend(const HeadInputs& in, const ScopeContext& context, const torch::Tensor& bias) {
  if (!context.self_attention) return {};
  CsanCall call;
  call.key_padding_mask = in.key_padding_mask;
  call.query_offset = context.query_offset;
  call.causal = context.causal;
  call.dropout = in.dropout;
  call.path = path_;
  call.banded_from_length = banded_from_length_;
  call.masks = masks_.get();
  call.extra_bias = bias;
  return csan_attention(in.q, in.k, in.v, window_, call);
}

namespace {

bool contains(const std::vector<int64_t>& layers, int64_t layer) {
  return std::find(layers.begin(), layers.end(), layer) != layers.end();
}

// The window at the configured layers of an encoder's or the decoder's self-attention.
std::shared_ptr<AttentionEntry> make_csan_entry(const core::Config& cfg, const AttentionSite& site) {
  if (!site.self_attention)
    throw Error::for_key("model.attention." + site.role,
                         "csan windows self-attention only (positions of queries and keys must be comparable)");
  const CsanOptions o = CsanOptions::from_config(cfg);
  const bool decoder = site.role.rfind("decoder", 0) == 0;
  const std::string key = decoder ? "model.csan.decoder_layers" : "model.csan.encoder_layers";
  const auto& layers = decoder ? o.decoder_layers : o.encoder_layers;
  check_layers_exist(key, layers, site.layer_count);
  if (!contains(layers, site.layer)) return nullptr;
  if (o.window.head_boundary != HeadBoundary::Truncate && o.window.head_window > site.num_heads)
    throw Error::for_key("model.csan.head_window", std::to_string(o.window.head_window) + " heads exceed the model's " +
                                                       std::to_string(site.num_heads) +
                                                       " (allowed only with head_boundary truncate)");
  return std::make_shared<CsanEntry>(o.window, o.banded_from_length, o.path);
}

core::Registrar<AttentionEntrySpec> csan_entry(
    attention_entry_registry(), "csan",
    {"convolutional self-attention (Yang et al. 2019): 1-D window or 2-D area over positions x heads",
     [](core::ConfigSchema& s) { csan_option_table().declare(s, /*with_defaults=*/false); },
     [] { return csan_option_table().defaults(); }, make_csan_entry});

}  // namespace

}  // namespace csan::nn
