// core::Config on a recipe and --set overrides. Beyond "no crash": whatever loads must
// come back unchanged through to_yaml(), which is how a checkpoint stores its recipe.
#include <cmath>

#include "../fuzz_targets.h"
#include "toolkit/core/config.h"
#include "toolkit/core/error.h"

namespace csan::fuzz {

namespace {

// Keys of every type, with ranges and choices, nested like the real recipes.
core::ConfigSchema schema() {
  core::ConfigSchema s;
  s.add_string("model.arch", "transformer", "architecture", {"transformer", "csan", "transformer_base"});
  s.add_double("model.dropout", 0.1, "dropout", 0.0, 1.0);
  s.add_int("model.encoder_layers", 6, "layers", 1, 64);
  s.add_bool("model.share_all_embeddings", false, "share");
  s.add_int_list("model.csan.encoder_layers", std::vector<int64_t>{0, 1, 2}, "csan layers", 0, 63);
  s.add_double_list("optimization.lr", std::vector<double>{5e-4}, "lr", 0.0);
  s.add_int("optimization.max_update", 0, "updates", 0);
  s.add_double("optimization.clip_norm", std::nullopt, "clip", 0.0);
  s.add_string("task.name", "translation", "task");
  s.add_string("checkpoint.save_dir", std::nullopt, "save dir");
  return s;
}

bool same_value(const core::Value& a, const core::Value& b) {
  if (a.index() != b.index()) return false;
  if (const double* x = std::get_if<double>(&a)) {
    const double y = std::get<double>(b);
    return *x == y || (std::isnan(*x) && std::isnan(y));
  }
  return a == b;
}

}  // namespace

void recipe(const uint8_t* data, size_t size) {
  static const core::ConfigSchema keys = schema();
  const std::vector<std::string> pieces = split_at_nul(data, size, 6);
  core::Config config(keys);
  try {
    config.load_yaml_string(pieces[0], "fuzz.yaml");
    for (size_t i = 1; i < pieces.size(); ++i) config.apply_override(pieces[i]);
  } catch (const Error&) {
    return;
  }
  const std::string yaml = config.to_yaml();
  core::Config back(keys);
  try {
    back = core::Config::from_yaml_string(yaml, keys, "to_yaml()");
  } catch (const Error& e) {
    throw InvariantBroken(std::string("to_yaml() output does not load again: ") + e.what() + "\n" + yaml);
  }
  for (const auto& [key, spec] : keys.specs()) {
    expect(back.has(key) == config.has(key), "key '" + key + "' lost or gained in to_yaml()");
    if (config.has(key))
      expect(same_value(back.value(key), config.value(key)), "key '" + key + "' changed in to_yaml()\n" + yaml);
  }
}

}  // namespace csan::fuzz
