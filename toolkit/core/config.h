// Recipes: a YAML file mapped to flat dotted keys ("model.arch", "optimization.lr").
// Components DECLARE their keys (type, default, help, range or allowed values) in one
// ConfigSchema; a Config holds values for those keys only, so that a typo, a wrong type
// or an out-of-range value is an error naming the key at load time, never a silently
// ignored setting. No LibTorch here.
//
// Typical flow (csan-train):
//   core::ConfigSchema schema = tasks::recipe_schema();  // every key of models, tasks, training
//   core::Config cfg(schema);
//   cfg.load_file(recipe_path);                     // explicit values from the recipe
//   for (auto& s : sets) cfg.apply_override(s);     // --set key=value
//   cfg.set("optimization.max_update", int64_t{n}); // real CLI flags
//   tasks::resolve_recipe(cfg);                     // presets fill what was not given
//   ... cfg.get<int64_t>("model.encoder_layers"), cfg.to_yaml() into the checkpoint.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace csan::core {

enum class ValueType { Bool, Int, Double, String, IntList, DoubleList, StringList };

// "a boolean", "an integer", ... for error messages.
std::string describe(ValueType type);

using Value = std::variant<bool, int64_t, double, std::string, std::vector<int64_t>, std::vector<double>,
                           std::vector<std::string>>;

struct KeySpec {
  std::string key;
  ValueType type = ValueType::String;
  std::optional<Value> default_value;  // absent: the key has no value unless given
  std::string help;
  std::optional<double> min, max;    // inclusive; numbers and every list element
  std::vector<std::string> choices;  // allowed values of a string key (or of each list item); empty = any
};

class ConfigSchema {
 public:
  // Declaring a key twice is allowed only with the same type (several components may
  // share a key, e.g. the generator and the trainer both read "generation.beam").
  ConfigSchema& add(KeySpec spec);

  ConfigSchema& add_bool(const std::string& key, bool default_value, const std::string& help);
  ConfigSchema& add_int(const std::string& key, std::optional<int64_t> default_value, const std::string& help,
                        std::optional<int64_t> min = std::nullopt, std::optional<int64_t> max = std::nullopt);
  ConfigSchema& add_double(const std::string& key, std::optional<double> default_value, const std::string& help,
                           std::optional<double> min = std::nullopt, std::optional<double> max = std::nullopt);
  ConfigSchema& add_string(const std::string& key, std::optional<std::string> default_value, const std::string& help,
                           std::vector<std::string> choices = {});
  ConfigSchema& add_int_list(const std::string& key, std::optional<std::vector<int64_t>> default_value,
                             const std::string& help, std::optional<int64_t> min = std::nullopt,
                             std::optional<int64_t> max = std::nullopt);
  ConfigSchema& add_double_list(const std::string& key, std::optional<std::vector<double>> default_value,
                                const std::string& help, std::optional<double> min = std::nullopt,
                                std::optional<double> max = std::nullopt);
  ConfigSchema& add_string_list(const std::string& key, std::optional<std::vector<std::string>> default_value,
                                const std::string& help, std::vector<std::string> choices = {});

  bool has(const std::string& key) const { return specs_.count(key) > 0; }
  const KeySpec& spec(const std::string& key) const;  // throws csan::Error for unknown keys
  const std::map<std::string, KeySpec>& specs() const { return specs_; }
  // The declared key closest to `key` by edit distance ("" if nothing is close).
  std::string nearest_key(const std::string& key) const;
  // Checks the type, range and allowed values of `value` for `key` (ints are accepted
  // for doubles and converted); returns the normalized value or throws csan::Error
  // prefixed with `where` ("recipe.yaml:12", "--set").
  Value check(const std::string& key, Value value, const std::string& where) const;

 private:
  std::map<std::string, KeySpec> specs_;
};

class Config {
 public:
  explicit Config(ConfigSchema schema);

  // Merges a recipe file: each leaf of the YAML mapping becomes key "a.b.c". Errors
  // name the file and line (malformed YAML, unknown key with a suggestion, wrong type,
  // out of range).
  void load_file(const std::string& path);
  // Same for YAML text; `origin` names it in errors.
  void load_yaml_string(const std::string& text, const std::string& origin = "<yaml>");
  static Config from_yaml_string(const std::string& text, ConfigSchema schema, const std::string& origin = "<yaml>");
  // "key=value", the value parsed as a YAML scalar or flow list ("[1, 2]").
  void apply_override(const std::string& assignment);

  // An explicit value (as if given in the recipe); validated.
  void set(const std::string& key, Value value);
  // A preset value: used only while the key has not been given explicitly.
  void set_default(const std::string& key, Value value);
  // A preset value only where the key has neither an explicit nor a preset value yet
  // (defaults of a component that an earlier preset may already have set).
  void set_fallback(const std::string& key, Value value);
  // Forgets the preset value of `key` (a component that is not in use after all).
  void drop_preset(const std::string& key) { presets_.erase(key); }
  const std::map<std::string, Value>& explicit_values() const { return explicit_; }
  const std::map<std::string, Value>& preset_values() const { return presets_; }

  // True when the key has a value (given, preset or declared default).
  bool has(const std::string& key) const;
  // True when the recipe, an override or set() gave the key.
  bool is_set(const std::string& key) const { return explicit_.count(key) > 0; }
  const Value& value(const std::string& key) const;  // throws if !has(key)

  // T: bool, int64_t, int, double, std::string, std::vector<int64_t>, std::vector<double>,
  // std::vector<std::string>.
  // Throws csan::Error if the key is unknown, has no value, or is declared with another type.
  template <typename T>
  T get(const std::string& key) const;

  // The resolved recipe (every key with a value, nested YAML, sorted), which
  // from_yaml_string reads back to an equal Config; embedded in checkpoints.
  std::string to_yaml() const;

  const ConfigSchema& schema() const { return schema_; }

 private:
  void assign(const std::string& key, Value value, const std::string& where);

  ConfigSchema schema_;
  std::map<std::string, Value> explicit_;
  std::map<std::string, Value> presets_;
};

template <>
bool Config::get<bool>(const std::string& key) const;
template <>
int64_t Config::get<int64_t>(const std::string& key) const;
template <>
int Config::get<int>(const std::string& key) const;
template <>
double Config::get<double>(const std::string& key) const;
template <>
std::string Config::get<std::string>(const std::string& key) const;
template <>
std::vector<int64_t> Config::get<std::vector<int64_t>>(const std::string& key) const;
template <>
std::vector<double> Config::get<std::vector<double>>(const std::string& key) const;
template <>
std::vector<std::string> Config::get<std::vector<std::string>>(const std::string& key) const;

}  // namespace csan::core
