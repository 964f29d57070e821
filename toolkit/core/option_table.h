// One table per options struct, so that each recipe key is written once: its name, type,
// range or choices, one-line doc and the struct member it fills. The default is the
// member's initializer. From the table come the schema declaration, the preset values
// (the defaults, for keys that only some architectures or attention entries have) and
// the struct read from a resolved Config.
//
//   struct FooOptions { int64_t width = 3; std::string mode = "a"; };
//   const core::OptionTable<FooOptions>& foo_table() {
//     static const auto table = core::OptionTable<FooOptions>()
//         .add("model.foo.width", &FooOptions::width, "how wide", 1)
//         .add("model.foo.mode", &FooOptions::mode, "how", {"a", "b"});
//     return table;
//   }
//   foo_table().declare(schema, /*with_defaults=*/false);  FooOptions o = foo_table().read(cfg);
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "toolkit/core/config.h"

namespace csan::core {

template <typename Options>
class OptionTable {
 public:
  OptionTable& add(const std::string& key, int64_t Options::*member, const std::string& help,
                   std::optional<int64_t> min = std::nullopt, std::optional<int64_t> max = std::nullopt) {
    return add_field(spec(key, ValueType::Int, help, as_double(min), as_double(max)), member);
  }
  OptionTable& add(const std::string& key, double Options::*member, const std::string& help,
                   std::optional<double> min = std::nullopt, std::optional<double> max = std::nullopt) {
    return add_field(spec(key, ValueType::Double, help, min, max), member);
  }
  OptionTable& add(const std::string& key, bool Options::*member, const std::string& help) {
    return add_field(spec(key, ValueType::Bool, help), member);
  }
  OptionTable& add(const std::string& key, std::string Options::*member, const std::string& help,
                   std::vector<std::string> choices = {}) {
    KeySpec s = spec(key, ValueType::String, help);
    s.choices = std::move(choices);
    return add_field(std::move(s), member);
  }
  OptionTable& add(const std::string& key, std::vector<int64_t> Options::*member, const std::string& help,
                   std::optional<int64_t> min = std::nullopt, std::optional<int64_t> max = std::nullopt) {
    return add_field(spec(key, ValueType::IntList, help, as_double(min), as_double(max)), member);
  }
  OptionTable& add(const std::string& key, std::vector<std::string> Options::*member, const std::string& help,
                   std::vector<std::string> choices = {}) {
    KeySpec s = spec(key, ValueType::StringList, help);
    s.choices = std::move(choices);
    return add_field(std::move(s), member);
  }
  // A key whose member sits in a nested struct: `ref` returns it (Options& -> T&).
  template <typename T, typename Ref>
  OptionTable& add_ref(const std::string& key, Ref ref, const std::string& help,
                       std::optional<double> min = std::nullopt, std::optional<double> max = std::nullopt,
                       std::vector<std::string> choices = {}) {
    KeySpec s = spec(key, type_of<T>(), help, min, max);
    s.choices = std::move(choices);
    fields_.push_back({std::move(s), [ref](const Options& o) { return Value(ref(const_cast<Options&>(o))); },
                       [ref](Options& o, const Value& v) { ref(o) = std::get<T>(v); }});
    return *this;
  }
  // A key whose member is not stored as the value itself (an enum, a nested struct):
  // `get` turns the member into the key's value, `set` the value into the member.
  OptionTable& add_custom(KeySpec key_spec, std::function<Value(const Options&)> get,
                          std::function<void(Options&, const Value&)> set) {
    fields_.push_back({std::move(key_spec), std::move(get), std::move(set)});
    return *this;
  }

  // Declares every key; with_defaults false leaves them without a declared default (the
  // key then has a value only where a preset or the recipe gives one).
  void declare(ConfigSchema& schema, bool with_defaults) const {
    // The key -> value map of defaults() rather than a default-constructed Options here:
    // GCC 12 took that Options' strings for "maybe uninitialized" when inlining this.
    const std::map<std::string, Value> values = with_defaults ? defaults() : std::map<std::string, Value>{};
    for (const auto& f : fields_) {
      KeySpec s = f.spec;
      if (with_defaults) s.default_value = values.at(f.spec.key);
      schema.add(std::move(s));
    }
  }
  // The defaults (a default-constructed Options) as key -> value, for presets.
  std::map<std::string, Value> defaults() const {
    const Options defaults{};
    std::map<std::string, Value> out;
    for (const auto& f : fields_) out.emplace(f.spec.key, f.get(defaults));
    return out;
  }
  Options read(const Config& cfg) const {
    Options o{};
    for (const auto& f : fields_) f.set(o, cfg.value(f.spec.key));
    return o;
  }
  std::vector<std::string> keys() const {
    std::vector<std::string> out;
    for (const auto& f : fields_) out.push_back(f.spec.key);
    return out;
  }

 private:
  struct Field {
    KeySpec spec;
    std::function<Value(const Options&)> get;
    std::function<void(Options&, const Value&)> set;
  };

  template <typename T>
  static constexpr ValueType type_of() {
    if constexpr (std::is_same_v<T, bool>)
      return ValueType::Bool;
    else if constexpr (std::is_same_v<T, int64_t>)
      return ValueType::Int;
    else if constexpr (std::is_same_v<T, double>)
      return ValueType::Double;
    else if constexpr (std::is_same_v<T, std::string>)
      return ValueType::String;
    else if constexpr (std::is_same_v<T, std::vector<int64_t>>)
      return ValueType::IntList;
    else if constexpr (std::is_same_v<T, std::vector<double>>)
      return ValueType::DoubleList;
    else
      return ValueType::StringList;
  }
  static std::optional<double> as_double(std::optional<int64_t> v) {
    return v ? std::optional<double>(static_cast<double>(*v)) : std::nullopt;
  }
  static KeySpec spec(const std::string& key, ValueType type, const std::string& help,
                      std::optional<double> min = std::nullopt, std::optional<double> max = std::nullopt) {
    KeySpec s;
    s.key = key;
    s.type = type;
    s.help = help;
    s.min = min;
    s.max = max;
    return s;
  }
  template <typename T>
  OptionTable& add_field(KeySpec s, T Options::*member) {
    fields_.push_back({std::move(s), [member](const Options& o) { return Value(o.*member); },
                       [member](Options& o, const Value& v) { o.*member = std::get<T>(v); }});
    return *this;
  }

  std::vector<Field> fields_;
};

}  // namespace csan::core
