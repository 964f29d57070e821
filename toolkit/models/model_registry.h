// Architectures by name. "model.arch" names a family's plain arch ("transformer") or a
// preset of it ("transformer_base"): the preset supplies values that the recipe may
// override. Each arch declares its own keys once; a recipe key of another arch, task or
// attention entry is an error naming the key and its owner. The trainer, the tasks and
// the generator only call the functions below.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "toolkit/core/config.h"
#include "toolkit/core/registry.h"
#include "toolkit/models/model.h"
#include "toolkit/models/model_context.h"

namespace csan::models {

using ModelBuilder = std::function<std::shared_ptr<Model>(const core::Config&, const ModelContext&)>;

struct ArchSpec {
  std::string family;  // kEncoderDecoder or kTagging
  // Declares the arch's model.* keys (several archs of one family share them) WITHOUT
  // defaults: a key has a value only in recipes of an arch that owns it.
  std::function<void(core::ConfigSchema&)> declare_options;
  // The family's default values of those keys.
  std::function<std::map<std::string, core::Value>()> defaults;
  ModelBuilder build;
  // This arch name's values over the family defaults ("model.embed_dim" -> 512, ...),
  // including its attention chains (model.attention.<role>) and their entries' keys.
  std::map<std::string, core::Value> preset;
  // The attention roles its models have: model.attention.<role> chooses each one's chain.
  std::vector<std::string> attention_roles;
};

// Archs register in files named *_arch.cpp (see CSAN_REGISTRATION_ANCHOR).
core::Registry<ArchSpec>& arch_registry();
std::vector<std::string> registered_archs();

// Declares "model.arch" (allowed values: registered_archs()), every key of every
// registered arch, model.attention.<role> for every role, and every attention entry's keys.
void declare_model_options(core::ConfigSchema& schema);

// Resolves cfg's model.* keys for its arch: the family defaults and the arch preset fill
// what the recipe did not set, then the defaults of the attention entries its chains
// name. Throws csan::Error naming the key for an unknown arch or entry and for a key the
// arch does not own (another arch's, or an entry's that no chain names); presets of keys
// that end up unused are dropped, so that to_yaml() writes a recipe that reads back.
void resolve_model_options(core::Config& cfg);

// Builds the model of cfg's arch (resolve_model_options must have run; build_model runs
// it again on a copy, which is harmless) and installs each attention site's chain.
std::shared_ptr<Model> build_model(const core::Config& cfg, const ModelContext& context);
// The family of cfg's arch.
std::string arch_family(const core::Config& cfg);

// The chain of every attention site of `model` from cfg's model.attention.<role> keys.
// Throws csan::Error naming the key for a role the model does not have.
void install_attention_chains(Model& model, const core::Config& cfg);

}  // namespace csan::models
