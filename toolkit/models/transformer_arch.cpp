// Registers "transformer" and its presets: transformer_{tiny,base,big} (Vaswani et al.'s
// sizes, models/presets.h) and transformer_{base,big}_prenorm, the NVIDIA fork's setup the
// CCN paper trained (pre-norm, final layer norms, attention projections without bias).
#include <memory>

#include "toolkit/models/model_registry.h"
#include "toolkit/models/presets.h"
#include "toolkit/models/transformer.h"

CSAN_REGISTRATION_ANCHOR(transformer_arch)

namespace csan::models {

ArchSpec transformer_family(Preset preset) {
  return {kEncoderDecoder,
          [](core::ConfigSchema& s) { transformer_option_table().declare(s, /*with_defaults=*/false); },
          [] { return transformer_option_table().defaults(); },
          [](const core::Config& cfg, const ModelContext& context) -> std::shared_ptr<Model> {
            return std::make_shared<TransformerModel>(TransformerOptions::from_config(cfg), context);
          },
          std::move(preset),
          transformer_attention_roles()};
}

namespace {

core::Registrar<ArchSpec> transformer_plain(arch_registry(), "transformer", transformer_family({}));
core::Registrar<ArchSpec> transformer_tiny(arch_registry(), "transformer_tiny",
                                           transformer_family(transformer_size("tiny")));
core::Registrar<ArchSpec> transformer_base(arch_registry(), "transformer_base",
                                           transformer_family(transformer_size("base")));
core::Registrar<ArchSpec> transformer_big(arch_registry(), "transformer_big",
                                          transformer_family(transformer_size("big")));
core::Registrar<ArchSpec> transformer_base_prenorm(arch_registry(), "transformer_base_prenorm",
                                                   transformer_family(merged(transformer_size("base"),
                                                                             prenorm_without_attention_bias())));
core::Registrar<ArchSpec> transformer_big_prenorm(arch_registry(), "transformer_big_prenorm",
                                                  transformer_family(merged(transformer_size("big"),
                                                                            prenorm_without_attention_bias())));

}  // namespace

}  // namespace csan::models
