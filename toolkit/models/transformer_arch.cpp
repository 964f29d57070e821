// Registers "transformer" and its presets. The base/big dimensions are Vaswani et al.'s
// (fairseq's transformer_wmt_en_de and transformer_vaswani_wmt_en_de_big); the
// *_prenorm variants are the NVIDIA fork's setup the CCN paper trained: pre-norm, final
// layer norms, attention projections without bias.
#include <memory>

#include "toolkit/models/model_registry.h"
#include "toolkit/models/transformer.h"

CSAN_ARCH_ANCHOR(transformer)

namespace csan::models {

namespace {

std::shared_ptr<EncoderDecoderModel> build_transformer(const core::Config& cfg, const ModelContext& context) {
  return std::make_shared<TransformerModel>(TransformerOptions::from_config(cfg), context);
}

ArchSpec transformer_arch(std::map<std::string, core::Value> preset) {
  return {declare_transformer_options, build_transformer, std::move(preset)};
}

using P = std::map<std::string, core::Value>;
const P kBase = {{"model.embed_dim", int64_t{512}}, {"model.ffn_dim", int64_t{2048}}, {"model.heads", int64_t{8}},
                 {"model.encoder_layers", int64_t{6}}, {"model.decoder_layers", int64_t{6}},
                 {"model.dropout", 0.1}};
const P kBig = {{"model.embed_dim", int64_t{1024}}, {"model.ffn_dim", int64_t{4096}}, {"model.heads", int64_t{16}},
                {"model.encoder_layers", int64_t{6}}, {"model.decoder_layers", int64_t{6}},
                {"model.dropout", 0.3}};
const P kPrenormNoBias = {{"model.normalize_before", true}, {"model.attn_bias", false}};

P merged(P a, const P& b) {
  for (const auto& [k, v] : b) a[k] = v;
  return a;
}

core::Registrar<ArchSpec> plain(arch_registry(), "transformer", transformer_arch({}));
core::Registrar<ArchSpec> tiny(arch_registry(), "transformer_tiny",
                               transformer_arch({{"model.embed_dim", int64_t{64}},
                                                 {"model.ffn_dim", int64_t{256}},
                                                 {"model.heads", int64_t{4}},
                                                 {"model.encoder_layers", int64_t{2}},
                                                 {"model.decoder_layers", int64_t{2}},
                                                 {"model.dropout", 0.1},
                                                 {"model.max_source_positions", int64_t{256}},
                                                 {"model.max_target_positions", int64_t{256}}}));
core::Registrar<ArchSpec> base(arch_registry(), "transformer_base", transformer_arch(kBase));
core::Registrar<ArchSpec> big(arch_registry(), "transformer_big", transformer_arch(kBig));
core::Registrar<ArchSpec> base_prenorm(arch_registry(), "transformer_base_prenorm",
                                       transformer_arch(merged(kBase, kPrenormNoBias)));
core::Registrar<ArchSpec> big_prenorm(arch_registry(), "transformer_big_prenorm",
                                      transformer_arch(merged(kBig, kPrenormNoBias)));

}  // namespace

}  // namespace csan::models
