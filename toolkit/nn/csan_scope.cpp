#include "toolkit/nn/csan_scope.h"

#include <algorithm>
#include <memory>

#include "toolkit/core/error.h"

namespace csan::nn {

// No declared defaults: the csan archs supply them as preset values (csan_defaults()),
// so that recipes of other architectures do not carry these keys.
void declare_csan_options(core::ConfigSchema& s) {
  s.add_int("model.csan.window", std::nullopt, "CSAN: M+1 positions each query sees, centred on it (odd)", 1);
  s.add_int("model.csan.head_window", std::nullopt, "CSAN: N+1 adjacent heads attended jointly (odd; 1: 1-D CSAN)", 1);
  s.add_string("model.csan.head_boundary", std::nullopt,
               "CSAN 2-D area at the first/last head: truncate (fewer heads), wrap (ring), "
               "authors (keys wrap, values clamp, as the first author's code)",
               {"truncate", "wrap", "authors"});
  s.add_int_list("model.csan.encoder_layers", std::nullopt,
                 "CSAN: encoder layers (0 = lowest) whose self-attention is windowed", 0);
  s.add_int_list("model.csan.decoder_layers", std::nullopt,
                 "CSAN: decoder layers whose self-attention gets the left half of the window", 0);
  s.add_int("model.csan.banded_from_length", std::nullopt,
            "CSAN: use the banded O(I*M) computation from this many keys on (shorter: masked dense); "
            "0: the measured crossover, 16 windows for 1-D and 9 for 2-D",
            0);
}

std::map<std::string, core::Value> csan_defaults() {
  const CsanOptions o;
  return {{"model.csan.window", o.window.window},
          {"model.csan.head_window", int64_t{3}},
          {"model.csan.head_boundary", head_boundary_name(o.window.head_boundary)},
          {"model.csan.encoder_layers", o.encoder_layers},
          {"model.csan.decoder_layers", o.decoder_layers},
          {"model.csan.banded_from_length", o.banded_from_length}};
}

CsanOptions CsanOptions::from_config(const core::Config& cfg) {
  CsanOptions o;
  o.window.window = cfg.get<int64_t>("model.csan.window");
  if (o.window.window % 2 == 0)
    throw Error::for_key("model.csan.window", "must be odd (M+1 positions centred on the query), got " +
                                                  std::to_string(o.window.window));
  o.window.head_window = cfg.get<int64_t>("model.csan.head_window");
  if (o.window.head_window % 2 == 0)
    throw Error::for_key("model.csan.head_window", "must be odd (N+1 heads centred on the query's head), got " +
                                                       std::to_string(o.window.head_window));
  o.window.head_boundary = parse_head_boundary(cfg.get<std::string>("model.csan.head_boundary"));
  o.encoder_layers = cfg.get<std::vector<int64_t>>("model.csan.encoder_layers");
  o.decoder_layers = cfg.get<std::vector<int64_t>>("model.csan.decoder_layers");
  o.banded_from_length = cfg.get<int64_t>("model.csan.banded_from_length");
  return o;
}

CsanScope::CsanScope(const CsanWindow& window, int64_t banded_from_length, CsanPath path,
                     std::shared_ptr<CsanMaskCache> masks)
    : window_(window), banded_from_length_(banded_from_length), path_(path), masks_(std::move(masks)) {}

torch::Tensor CsanScope::attend(const HeadInputs& in, const ScopeContext& context) {
  if (!context.self_attention) return {};
  CsanCall call;
  call.key_padding_mask = in.key_padding_mask;
  call.query_offset = context.query_offset;
  call.causal = context.causal;
  call.dropout = in.dropout;
  call.path = path_;
  call.banded_from_length = banded_from_length_;
  call.masks = masks_.get();
  return csan_attention(in.q, in.k, in.v, window_, call);
}

namespace {

bool contains(const std::vector<int64_t>& layers, int64_t layer) {
  return std::find(layers.begin(), layers.end(), layer) != layers.end();
}

// Windowed scope at the configured self-attention sites, full scope elsewhere.
std::shared_ptr<AttentionScope> make_csan_scope(const core::Config& cfg, const AttentionSite& site) {
  const CsanOptions o = CsanOptions::from_config(cfg);
  const bool chosen = site.self_attention && contains(site.in_encoder ? o.encoder_layers : o.decoder_layers, site.layer);
  if (!chosen) return std::make_shared<FullScope>();
  if (o.window.head_boundary != HeadBoundary::Truncate && o.window.head_window > site.num_heads)
    throw Error::for_key("model.csan.head_window",
                         std::to_string(o.window.head_window) + " heads exceed the model's " +
                             std::to_string(site.num_heads) + " (allowed only with head_boundary truncate)");
  return std::make_shared<CsanScope>(o.window, o.banded_from_length, o.path);
}

core::Registrar<ScopeFactory> csan_scope(scope_registry(), "csan", make_csan_scope);

}  // namespace

}  // namespace csan::nn
