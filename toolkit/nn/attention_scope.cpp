#include "toolkit/nn/attention_scope.h"

namespace csan::nn {

core::Registry<ScopeFactory>& scope_registry() {
  static core::Registry<ScopeFactory> registry("attention scope");
  return registry;
}

namespace {
core::Registrar<ScopeFactory> full_scope(scope_registry(), "full", [](const core::Config&, const AttentionSite&) {
  return std::make_shared<FullScope>();
});
}  // namespace

}  // namespace csan::nn
