// Registers "csan" and its presets: the Transformer with convolutional self-attention
// (Yang et al., NAACL 2019) in the lowest encoder layers. Parameter-free: a csan preset
// builds exactly its Transformer preset's parameters and only installs the "csan"
// attention scope (toolkit/nn/csan_scope.h) at the chosen self-attention sites.
//   csan1d_*: window of M+1 = 11 positions;  csan2d_*: area of 11 positions x 3 heads.
// The dimensions repeat transformer_arch.cpp's presets; a test checks that they agree.
#include <memory>
#include <string>

#include "toolkit/core/error.h"
#include "toolkit/models/model_registry.h"
#include "toolkit/models/transformer.h"
#include "toolkit/nn/csan_scope.h"

CSAN_ARCH_ANCHOR(csan)

namespace csan::models {

namespace {

void declare_csan_arch_options(core::ConfigSchema& schema) {
  declare_transformer_options(schema);
  nn::declare_csan_options(schema);
}

void check_layers(const std::string& key, const std::vector<int64_t>& layers, int64_t count) {
  for (int64_t layer : layers)
    if (layer >= count)
      throw Error::for_key(key, "layer " + std::to_string(layer) + " does not exist (there are " +
                                    std::to_string(count) + ", numbered from 0)");
}

std::shared_ptr<EncoderDecoderModel> build_csan(const core::Config& cfg, const ModelContext& context) {
  const TransformerOptions options = TransformerOptions::from_config(cfg);
  const nn::CsanOptions csan = nn::CsanOptions::from_config(cfg);
  check_layers("model.csan.encoder_layers", csan.encoder_layers, options.encoder_layers);
  check_layers("model.csan.decoder_layers", csan.decoder_layers, options.decoder_layers);
  auto model = std::make_shared<TransformerModel>(options, context);
  const auto& make_scope = nn::scope_registry().get("csan");
  model->for_each_attention([&](const nn::AttentionSite& site, nn::MultiheadAttention& attention) {
    attention->set_scope(make_scope(cfg, site));
  });
  return model;
}

using P = std::map<std::string, core::Value>;

P with(P a, const P& b) {
  for (const auto& [k, v] : b) a[k] = v;
  return a;
}

// Every csan arch carries all CSAN keys as preset values (see csan_defaults()).
ArchSpec csan_arch(const P& preset) {
  return {declare_csan_arch_options, build_csan, with(nn::csan_defaults(), preset)};
}

const P kTiny = {{"model.embed_dim", int64_t{64}},           {"model.ffn_dim", int64_t{256}},
                 {"model.heads", int64_t{4}},                {"model.encoder_layers", int64_t{2}},
                 {"model.decoder_layers", int64_t{2}},       {"model.dropout", 0.1},
                 {"model.max_source_positions", int64_t{256}}, {"model.max_target_positions", int64_t{256}},
                 {"model.csan.encoder_layers", std::vector<int64_t>{0}}};
const P kBase = {{"model.embed_dim", int64_t{512}}, {"model.ffn_dim", int64_t{2048}}, {"model.heads", int64_t{8}},
                 {"model.encoder_layers", int64_t{6}}, {"model.decoder_layers", int64_t{6}},
                 {"model.dropout", 0.1}};
const P kBig = {{"model.embed_dim", int64_t{1024}}, {"model.ffn_dim", int64_t{4096}}, {"model.heads", int64_t{16}},
                {"model.encoder_layers", int64_t{6}}, {"model.decoder_layers", int64_t{6}},
                {"model.dropout", 0.3}};
// The first author's public code: window 11, 3 heads.
const P k1d = {{"model.csan.window", int64_t{11}}, {"model.csan.head_window", int64_t{1}}};
const P k2d = {{"model.csan.window", int64_t{11}}, {"model.csan.head_window", int64_t{3}}};

core::Registrar<ArchSpec> plain(arch_registry(), "csan", csan_arch({}));
core::Registrar<ArchSpec> tiny1d(arch_registry(), "csan1d_tiny", csan_arch(with(kTiny, k1d)));
core::Registrar<ArchSpec> tiny2d(arch_registry(), "csan2d_tiny", csan_arch(with(kTiny, k2d)));
core::Registrar<ArchSpec> base1d(arch_registry(), "csan1d_base", csan_arch(with(kBase, k1d)));
core::Registrar<ArchSpec> base2d(arch_registry(), "csan2d_base", csan_arch(with(kBase, k2d)));
core::Registrar<ArchSpec> big1d(arch_registry(), "csan1d_big", csan_arch(with(kBig, k1d)));
core::Registrar<ArchSpec> big2d(arch_registry(), "csan2d_big", csan_arch(with(kBig, k2d)));

}  // namespace

}  // namespace csan::models
