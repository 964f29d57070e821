// Shared by the model, attention and generation tests: recipes from YAML text resolved
// as csan-train resolves them, translation models built from them, and the message of
// an expected error.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "toolkit/core/config.h"
#include "toolkit/core/error.h"
#include "toolkit/models/encoder_decoder_model.h"
#include "toolkit/models/model_context.h"
#include "toolkit/models/model_registry.h"
#include "toolkit/tasks/recipe.h"

namespace csan::testing {

// A resolved recipe (every key of the recipe schema) from YAML text.
inline core::Config recipe(const std::string& yaml) {
  core::Config cfg(tasks::recipe_schema());
  cfg.load_yaml_string(yaml, "test.yaml");
  tasks::resolve_recipe(cfg);
  return cfg;
}

// A translation context with one dictionary of `vocab` types for both sides.
inline models::ModelContext joined(int64_t vocab) { return models::ModelContext::translation(vocab, vocab, 1, true); }

inline std::shared_ptr<models::EncoderDecoderModel> translation_model(const core::Config& cfg,
                                                                      const models::ModelContext& context) {
  auto model = std::dynamic_pointer_cast<models::EncoderDecoderModel>(models::build_model(cfg, context));
  if (!model) throw Error("the recipe's arch is not an encoder-decoder model");
  return model;
}

// The message of the csan::Error that f throws, or "(no error)".
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace csan::testing
