// Registers "tagger" and one preset per row of Dufter et al.'s Table 2 (UD dimensions:
// words 128, characters 64, so d 192 and d_h 48; PE[con] adds 64 for d 256):
//   tagger_san      SAN (no position information)
//   tagger_pe_add   SAN+PE[add]       tagger_pe_con   SAN+PE[con]
//   tagger_p        SAN+P             tagger_r        SAN+R           tagger_p_r   SAN+P+R
//   tagger_temp     SAN+PE[add]+Temp  tagger_conv     SAN+PE[add]+Conv
//   tagger_conv2d   SAN+PE[add]+Conv2d
// "tagger" itself is SAN+PE[add]. The variants are attention-chain entries, so any
// combination is a chain: model.attention.encoder.self: [position_matrix, attention_conv2d].
#include <memory>
#include <string>
#include <vector>

#include "toolkit/models/model_registry.h"
#include "toolkit/models/presets.h"
#include "toolkit/models/tagger_model.h"

CSAN_REGISTRATION_ANCHOR(tagger_arch)

namespace csan::models {

namespace {

ArchSpec tagger_family(Preset preset) {
  return {kTagging,
          [](core::ConfigSchema& s) { tagger_option_table().declare(s, /*with_defaults=*/false); },
          [] { return tagger_option_table().defaults(); },
          [](const core::Config& cfg, const ModelContext& context) -> std::shared_ptr<Model> {
            return std::make_shared<TaggerModel>(tagger_option_table().read(cfg), context);
          },
          std::move(preset),
          {"encoder.self"}};
}

Preset row(const std::string& positions, std::vector<std::string> chain) {
  return {{"model.tagger.position_embedding", positions}, {"model.attention.encoder.self", std::move(chain)}};
}

core::Registrar<ArchSpec> tagger_plain(arch_registry(), "tagger", tagger_family({}));
core::Registrar<ArchSpec> san(arch_registry(), "tagger_san", tagger_family(row("none", {})));
core::Registrar<ArchSpec> pe_add(arch_registry(), "tagger_pe_add", tagger_family(row("add", {})));
core::Registrar<ArchSpec> pe_con(arch_registry(), "tagger_pe_con", tagger_family(row("concat", {})));
core::Registrar<ArchSpec> p(arch_registry(), "tagger_p", tagger_family(row("none", {"position_matrix"})));
core::Registrar<ArchSpec> r(arch_registry(), "tagger_r", tagger_family(row("none", {"relative_bias"})));
core::Registrar<ArchSpec> p_r(arch_registry(), "tagger_p_r",
                              tagger_family(row("none", {"position_matrix", "relative_bias"})));
core::Registrar<ArchSpec> temp(arch_registry(), "tagger_temp", tagger_family(row("add", {"temperature"})));
core::Registrar<ArchSpec> conv(arch_registry(), "tagger_conv", tagger_family(row("add", {"attention_conv1d"})));
core::Registrar<ArchSpec> conv2d(arch_registry(), "tagger_conv2d", tagger_family(row("add", {"attention_conv2d"})));

}  // namespace

}  // namespace csan::models
