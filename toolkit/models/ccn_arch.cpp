// Registers "ccn" and its presets: Crossed Co-Attention Networks (Li & Jiang 2020) on the
// Transformer's sizes (models/presets.h) with the setup the paper trained, NVIDIA's
// fairseq fork: pre-norm with final layer norms, attention projections without bias.
//   ccn_tiny (d 64, 2 + 2 layers: demo and tests), ccn_base (d 512), ccn_big (d 1024).
// With one joined vocabulary of V types and shared embeddings, a ccn preset has its
// transformer_*_prenorm's parameters plus 204 d^2 + 170 d per 6 + 6 layers (Table 1).
#include <memory>

#include "toolkit/models/ccn_model.h"
#include "toolkit/models/model_registry.h"
#include "toolkit/models/presets.h"

CSAN_REGISTRATION_ANCHOR(ccn_arch)

namespace csan::models {

namespace {

ArchSpec ccn_family(Preset preset) {
  return {kEncoderDecoder,
          [](core::ConfigSchema& s) {
            transformer_option_table().declare(s, /*with_defaults=*/false);
            ccn_option_table().declare(s, /*with_defaults=*/false);
          },
          [] { return merged(transformer_option_table().defaults(), ccn_option_table().defaults()); },
          [](const core::Config& cfg, const ModelContext& context) -> std::shared_ptr<Model> {
            return std::make_shared<CcnModel>(TransformerOptions::from_config(cfg), CcnOptions::from_config(cfg),
                                              context);
          },
          std::move(preset),
          ccn_attention_roles()};
}

Preset ccn(const std::string& size) { return merged(transformer_size(size), prenorm_without_attention_bias()); }

core::Registrar<ArchSpec> ccn_plain(arch_registry(), "ccn", ccn_family({}));
core::Registrar<ArchSpec> ccn_tiny(arch_registry(), "ccn_tiny", ccn_family(ccn("tiny")));
core::Registrar<ArchSpec> ccn_base(arch_registry(), "ccn_base", ccn_family(ccn("base")));
core::Registrar<ArchSpec> ccn_big(arch_registry(), "ccn_big", ccn_family(ccn("big")));

}  // namespace

}  // namespace csan::models
