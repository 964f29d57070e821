#include "toolkit/models/model_registry.h"

#include <algorithm>
#include <set>

#include "toolkit/core/error.h"
#include "toolkit/nn/attention_entry.h"

namespace csan::anchors {
void link_models();
}  // namespace csan::anchors

namespace csan::models {

namespace {

const std::string kAttentionPrefix = "model.attention.";

std::set<std::string> declared_keys(const std::function<void(core::ConfigSchema&)>& declare) {
  core::ConfigSchema scratch;
  declare(scratch);
  std::set<std::string> keys;
  for (const auto& [key, spec] : scratch.specs()) keys.insert(key);
  return keys;
}

std::vector<std::string> all_roles() {
  std::set<std::string> roles;
  for (const auto& name : registered_archs())
    for (const auto& role : arch_registry().get(name).attention_roles) roles.insert(role);
  return {roles.begin(), roles.end()};
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// The entries cfg's chains name (in order of first appearance).
std::vector<std::string> chain_entries(const core::Config& cfg, const ArchSpec& arch) {
  std::vector<std::string> names;
  for (const auto& role : arch.attention_roles) {
    const std::string key = kAttentionPrefix + role;
    if (!cfg.has(key)) continue;
    for (const auto& name : cfg.get<std::vector<std::string>>(key)) {
      if (!nn::attention_entry_registry().contains(name))
        throw Error::for_key(
            key, "unknown attention entry '" + name + "'; known: " + nn::attention_entry_registry().known());
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    }
  }
  return names;
}

// Who owns a model.* key, for the error of a key the arch does not own.
std::string owners_of(const std::string& key) {
  std::vector<std::string> owners;
  for (const auto& name : registered_archs())
    if (declared_keys(arch_registry().get(name).declare_options).count(key)) owners.push_back("arch " + name);
  for (const auto& name : nn::attention_entry_registry().names())
    if (declared_keys(nn::attention_entry_registry().get(name).declare_options).count(key))
      owners.push_back("attention entry " + name);
  if (key.rfind(kAttentionPrefix, 0) == 0) {
    const std::string role = key.substr(kAttentionPrefix.size());
    for (const auto& name : registered_archs()) {
      const auto& roles = arch_registry().get(name).attention_roles;
      if (std::find(roles.begin(), roles.end(), role) != roles.end()) owners.push_back("arch " + name);
    }
  }
  if (owners.size() > 4) owners.resize(4), owners.push_back("...");
  return joined(owners);
}

}  // namespace

core::Registry<ArchSpec>& arch_registry() {
  csan::anchors::link_models();
  static core::Registry<ArchSpec> registry("arch");
  return registry;
}

std::vector<std::string> registered_archs() { return arch_registry().names(); }

void declare_model_options(core::ConfigSchema& schema) {
  schema.add_string("model.arch", "transformer", "architecture or preset name", registered_archs());
  for (const auto& name : registered_archs()) arch_registry().get(name).declare_options(schema);
  for (const auto& role : all_roles())
    schema.add_string_list(kAttentionPrefix + role, std::nullopt,
                           "attention chain of the " + role + " sites, in order (empty: full scope); entries: " +
                               nn::attention_entry_registry().known(),
                           nn::attention_entry_registry().names());
  for (const auto& name : nn::attention_entry_registry().names())
    nn::attention_entry_registry().get(name).declare_options(schema);
}

void resolve_model_options(core::Config& cfg) {
  const std::string arch_name = cfg.get<std::string>("model.arch");
  const ArchSpec& arch = arch_registry().get(arch_name);
  for (const auto& [key, value] : arch.defaults()) cfg.set_default(key, value);
  for (const auto& [key, value] : arch.preset) cfg.set_default(key, value);

  std::set<std::string> owned = declared_keys(arch.declare_options);
  owned.insert("model.arch");
  for (const auto& role : arch.attention_roles) owned.insert(kAttentionPrefix + role);
  for (const auto& name : chain_entries(cfg, arch)) {
    const auto& entry = nn::attention_entry_registry().get(name);
    for (const auto& [key, value] : entry.defaults()) cfg.set_fallback(key, value);
    const auto keys = declared_keys(entry.declare_options);
    owned.insert(keys.begin(), keys.end());
  }
  for (const auto& [key, value] : cfg.explicit_values()) {
    if (key.rfind("model.", 0) != 0 || owned.count(key)) continue;
    const std::string owners = owners_of(key);
    throw Error::for_key(key, "is not a key of arch " + arch_name +
                                  (owners.empty() ? std::string() : " (it belongs to " + owners + ")") +
                                  (key.rfind("model.", 0) == 0 && owners.find("attention entry") != std::string::npos
                                       ? "; name the entry in a model.attention.<role> chain to use it"
                                       : ""));
  }
  std::vector<std::string> unused;
  for (const auto& [key, value] : cfg.preset_values())
    if (key.rfind("model.", 0) == 0 && !owned.count(key)) unused.push_back(key);
  for (const auto& key : unused) cfg.drop_preset(key);
}

std::string arch_family(const core::Config& cfg) {
  return arch_registry().get(cfg.get<std::string>("model.arch")).family;
}

void install_attention_chains(Model& model, const core::Config& cfg) {
  std::set<std::string> seen;
  model.for_each_attention([&](const nn::AttentionSite& site, nn::MultiheadAttention& attention) {
    seen.insert(site.role);
    attention->set_site(site);
    const std::string key = kAttentionPrefix + site.role;
    if (!cfg.has(key)) return;
    for (const auto& name : cfg.get<std::vector<std::string>>(key)) {
      auto entry = nn::attention_entry_registry().get(name).build(cfg, site);
      if (entry) attention->add_entry(name, std::move(entry));
    }
  });
  for (const auto& [key, value] : cfg.explicit_values()) {
    if (key.rfind(kAttentionPrefix, 0) != 0) continue;
    const std::string role = key.substr(kAttentionPrefix.size());
    if (!seen.count(role) && !std::get<std::vector<std::string>>(value).empty())
      throw Error::for_key(key, "this " + cfg.get<std::string>("model.arch") + " model has no " + role +
                                    " attention (its sites: " + joined({seen.begin(), seen.end()}) + ")");
  }
}

std::shared_ptr<Model> build_model(const core::Config& cfg, const ModelContext& context) {
  core::Config resolved = cfg;
  resolve_model_options(resolved);
  auto model = arch_registry().get(resolved.get<std::string>("model.arch")).build(resolved, context);
  install_attention_chains(*model, resolved);
  return model;
}

}  // namespace csan::models
