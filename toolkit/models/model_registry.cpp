#include "toolkit/models/model_registry.h"

namespace csan::models {

// One entry per architecture file (see CSAN_ARCH_ANCHOR): referencing it here makes
// the linker keep that file, and with it its registrars, in every binary.
namespace anchors {
void transformer();
void csan();
}  // namespace anchors

core::Registry<ArchSpec>& arch_registry() {
  anchors::transformer();
  anchors::csan();
  static core::Registry<ArchSpec> registry("arch");
  return registry;
}

std::vector<std::string> registered_archs() { return arch_registry().names(); }

void declare_model_options(core::ConfigSchema& schema) {
  schema.add_string("model.arch", "transformer", "architecture or preset name", registered_archs());
  for (const auto& name : registered_archs()) arch_registry().get(name).declare_options(schema);
}

void apply_arch_preset(core::Config& cfg) {
  const ArchSpec& arch = arch_registry().get(cfg.get<std::string>("model.arch"));
  for (const auto& [key, value] : arch.preset) cfg.set_default(key, value);
}

std::shared_ptr<EncoderDecoderModel> build_model(const core::Config& cfg, const ModelContext& context) {
  core::Config resolved = cfg;
  apply_arch_preset(resolved);
  return arch_registry().get(resolved.get<std::string>("model.arch")).build(resolved, context);
}

}  // namespace csan::models
