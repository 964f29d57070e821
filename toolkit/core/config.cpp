#include "toolkit/core/config.h"

#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <functional>

#include "toolkit/core/atomic_file.h"
#include "toolkit/core/error.h"
#include "toolkit/core/utf8.h"

namespace csan::core {

namespace {

std::string where_in(const std::string& origin, const YAML::Mark& mark) {
  return mark.is_null() ? origin : origin + ":" + std::to_string(mark.line + 1);
}

std::optional<int64_t> parse_int(const std::string& text) {
  if (text.empty()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return std::nullopt;
  return static_cast<int64_t>(v);
}

std::optional<double> parse_double(const std::string& text) {
  if (text.empty()) return std::nullopt;
  if (text == ".inf" || text == "inf") return HUGE_VAL;
  if (text == "-.inf" || text == "-inf") return -HUGE_VAL;
  errno = 0;
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (errno == ERANGE || *end != '\0') return std::nullopt;
  return v;
}

std::optional<bool> parse_bool(const std::string& text) {
  if (text == "true" || text == "True" || text == "TRUE" || text == "yes" || text == "on") return true;
  if (text == "false" || text == "False" || text == "FALSE" || text == "no" || text == "off") return false;
  return std::nullopt;
}

// Shortest text that reads back to exactly x, so to_yaml() round-trips.
std::string exact_double_text(double x) {
  char buf[40];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, x);
    if (std::strtod(buf, nullptr) == x) break;
  }
  std::string text = buf;
  if (text.find_first_of(".eEn") == std::string::npos) text += ".0";  // stays a float in YAML
  return text;
}

// Converts a YAML leaf to the declared type; type errors show the text as written.
Value to_value(const YAML::Node& node, const KeySpec& spec, const std::string& where) {
  auto fail = [&](const std::string& shown) {
    return Error(where + ": key '" + spec.key + "': expected " + describe(spec.type) + ", got " + shown,
                 ErrorKind::bad_option);
  };
  auto shown = [&](const YAML::Node& n) -> std::string {
    if (n.IsScalar()) return "'" + n.Scalar() + "'";
    if (n.IsSequence()) return "a list";
    if (n.IsMap()) return "a mapping";
    return "nothing";
  };
  auto scalar_int = [&](const YAML::Node& n) {
    auto v = n.IsScalar() ? parse_int(n.Scalar()) : std::nullopt;
    if (!v) throw fail(shown(n));
    return *v;
  };
  auto scalar_double = [&](const YAML::Node& n) {
    auto v = n.IsScalar() ? parse_double(n.Scalar()) : std::nullopt;
    if (!v) throw fail(shown(n));
    return *v;
  };
  switch (spec.type) {
    case ValueType::Bool: {
      auto v = node.IsScalar() ? parse_bool(node.Scalar()) : std::nullopt;
      if (!v) throw fail(shown(node));
      return *v;
    }
    case ValueType::Int:
      return scalar_int(node);
    case ValueType::Double:
      return scalar_double(node);
    case ValueType::String:
      if (!node.IsScalar()) throw fail(shown(node));
      return node.Scalar();
    case ValueType::IntList: {
      std::vector<int64_t> out;
      if (node.IsScalar()) return std::vector<int64_t>{scalar_int(node)};  // "3" is the list [3]
      if (!node.IsSequence()) throw fail(shown(node));
      for (const auto& item : node) out.push_back(scalar_int(item));
      return out;
    }
    case ValueType::DoubleList: {
      std::vector<double> out;
      if (node.IsScalar()) return std::vector<double>{scalar_double(node)};
      if (!node.IsSequence()) throw fail(shown(node));
      for (const auto& item : node) out.push_back(scalar_double(item));
      return out;
    }
    case ValueType::StringList: {
      std::vector<std::string> out;
      if (node.IsScalar()) return std::vector<std::string>{node.Scalar()};  // "csan" is the list [csan]
      if (!node.IsSequence()) throw fail(shown(node));
      for (const auto& item : node) {
        if (!item.IsScalar()) throw fail("a list holding " + shown(item));
        out.push_back(item.Scalar());
      }
      return out;
    }
  }
  throw fail(shown(node));
}

YAML::Node to_node(const Value& value) {
  YAML::Node node;
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, bool>) {
          node = v ? "true" : "false";
        } else if constexpr (std::is_same_v<T, int64_t>) {
          node = std::to_string(v);
        } else if constexpr (std::is_same_v<T, double>) {
          node = exact_double_text(v);
        } else if constexpr (std::is_same_v<T, std::string>) {
          node = v;
        } else {
          node = YAML::Node(YAML::NodeType::Sequence);
          for (const auto& x : v) node.push_back(to_node(Value(x)));
          node.SetStyle(YAML::EmitterStyle::Flow);
        }
      },
      value);
  return node;
}

}  // namespace

Config::Config(ConfigSchema schema) : schema_(std::move(schema)) {}

void Config::assign(const std::string& key, Value value, const std::string& where) {
  if (!schema_.has(key)) {
    std::string near = schema_.nearest_key(key);
    throw Error(where + ": unknown key '" + key + "'" + (near.empty() ? "" : " (did you mean '" + near + "'?)"),
                ErrorKind::bad_option);
  }
  explicit_[key] = schema_.check(key, std::move(value), where);
}

void Config::load_file(const std::string& path) { load_yaml_string(read_file(path), path); }

void Config::load_yaml_string(const std::string& text, const std::string& origin) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw Error(where_in(origin, e.mark) + ": malformed YAML: " + e.msg, ErrorKind::bad_input);
  }
  // An empty file is a mistake (a wrong path, an unsaved editor buffer), not a recipe.
  if (root.IsNull()) throw Error(origin + ": the recipe is empty (expected a mapping of keys)");
  if (!root.IsMap()) throw Error(where_in(origin, root.Mark()) + ": a recipe must be a mapping of keys");

  // Depth-first over nested mappings; every leaf is one dotted key. A key given twice
  // is an error: YAML parsers disagree on which one wins.
  std::map<std::string, std::string> first_seen;
  std::function<void(const YAML::Node&, const std::string&)> walk = [&](const YAML::Node& map,
                                                                        const std::string& prefix) {
    for (const auto& entry : map) {
      std::string where = where_in(origin, entry.first.Mark());
      if (!entry.first.IsScalar()) throw Error(where + ": keys must be plain names");
      std::string key = prefix + entry.first.Scalar();
      // yaml-cpp keeps both entries of a repeated key, sections ("model:" twice) included.
      if (auto [it, fresh] = first_seen.emplace(key, where); !fresh)
        throw Error(where + ": key '" + key + "' is given twice (first at " + it->second + ")");
      if (entry.second.IsMap() && !schema_.has(key)) {
        walk(entry.second, key + ".");
        continue;
      }
      if (!schema_.has(key)) {
        assign(key, Value(false), where);  // throws the unknown-key error with a suggestion
      }
      assign(key, to_value(entry.second, schema_.spec(key), where), where);
    }
  };
  walk(root, "");
}

Config Config::from_yaml_string(const std::string& text, ConfigSchema schema, const std::string& origin) {
  Config cfg(std::move(schema));
  cfg.load_yaml_string(text, origin);
  return cfg;
}

void Config::apply_override(const std::string& assignment) {
  auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    throw Error("--set '" + assignment + "': expected KEY=VALUE", ErrorKind::bad_option);
  std::string key = assignment.substr(0, eq);
  std::string text = assignment.substr(eq + 1);
  std::string where = "--set " + key;
  if (!schema_.has(key)) assign(key, Value(false), "--set");  // unknown-key error
  // yaml-cpp would read bytes starting with a byte-order mark as UTF-16 text.
  if (!utf8::is_valid(text)) throw Error(where + ": the value is not valid UTF-8", ErrorKind::bad_option);
  const KeySpec& spec = schema_.spec(key);
  YAML::Node node;
  try {
    node = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    if (spec.type != ValueType::String)
      throw Error(where + ": malformed value '" + text + "': " + e.msg, ErrorKind::bad_option);
    node = YAML::Node(text);
  }
  // A string is taken as written unless YAML reads it as a plain scalar ("'a b'" unquotes).
  if (spec.type == ValueType::String && !(node.IsScalar())) node = YAML::Node(text);
  assign(key, to_value(node, spec, where), where);
}

void Config::set(const std::string& key, Value value) { assign(key, std::move(value), "setting"); }

void Config::set_default(const std::string& key, Value value) {
  if (!schema_.has(key)) assign(key, Value(false), "preset");  // throws the unknown-key error
  presets_[key] = schema_.check(key, std::move(value), "preset");
}

void Config::set_fallback(const std::string& key, Value value) {
  if (explicit_.count(key) || presets_.count(key)) return;
  set_default(key, std::move(value));
}

bool Config::has(const std::string& key) const {
  if (explicit_.count(key) || presets_.count(key)) return true;
  return schema_.has(key) && schema_.spec(key).default_value.has_value();
}

const Value& Config::value(const std::string& key) const {
  if (auto it = explicit_.find(key); it != explicit_.end()) return it->second;
  if (auto it = presets_.find(key); it != presets_.end()) return it->second;
  const KeySpec& spec = schema_.spec(key);  // throws for unknown keys
  if (!spec.default_value) throw Error::for_key(key, "has no value (set it in the recipe or with --set)");
  return *spec.default_value;
}

namespace {
template <typename T>
const T& typed(const Config& cfg, const std::string& key) {
  const Value& v = cfg.value(key);
  if (!std::holds_alternative<T>(v))
    throw Error::for_key(key, "read as the wrong type (declared as " + describe(cfg.schema().spec(key).type) + ")");
  return std::get<T>(v);
}
}  // namespace

template <>
bool Config::get<bool>(const std::string& key) const {
  return typed<bool>(*this, key);
}
template <>
int64_t Config::get<int64_t>(const std::string& key) const {
  return typed<int64_t>(*this, key);
}
template <>
int Config::get<int>(const std::string& key) const {
  return static_cast<int>(typed<int64_t>(*this, key));
}
template <>
double Config::get<double>(const std::string& key) const {
  return typed<double>(*this, key);
}
template <>
std::string Config::get<std::string>(const std::string& key) const {
  return typed<std::string>(*this, key);
}
template <>
std::vector<int64_t> Config::get<std::vector<int64_t>>(const std::string& key) const {
  return typed<std::vector<int64_t>>(*this, key);
}
template <>
std::vector<double> Config::get<std::vector<double>>(const std::string& key) const {
  return typed<std::vector<double>>(*this, key);
}
template <>
std::vector<std::string> Config::get<std::vector<std::string>>(const std::string& key) const {
  return typed<std::vector<std::string>>(*this, key);
}

std::string Config::to_yaml() const {
  YAML::Node root(YAML::NodeType::Map);
  for (const auto& [key, spec] : schema_.specs()) {
    if (!has(key)) continue;
    // Walk/create the nested mappings "a" -> "b" for key "a.b.c".
    std::vector<YAML::Node> path{root};
    size_t start = 0;
    for (size_t dot; (dot = key.find('.', start)) != std::string::npos; start = dot + 1) {
      YAML::Node child = path.back()[key.substr(start, dot - start)];
      path.push_back(child);
    }
    path.back()[key.substr(start)] = to_node(value(key));
  }
  YAML::Emitter out;
  out << root;
  return std::string(out.c_str()) + "\n";
}

}  // namespace csan::core
