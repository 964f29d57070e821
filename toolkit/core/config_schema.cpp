#include <algorithm>
#include <cmath>
#include <cstdio>

#include "toolkit/core/config.h"
#include "toolkit/core/error.h"
#include "toolkit/core/utf8.h"

namespace csan::core {

std::string describe(ValueType type) {
  switch (type) {
    case ValueType::Bool:
      return "a boolean";
    case ValueType::Int:
      return "an integer";
    case ValueType::Double:
      return "a number";
    case ValueType::String:
      return "a string";
    case ValueType::IntList:
      return "a list of integers";
    case ValueType::DoubleList:
      return "a list of numbers";
    case ValueType::StringList:
      return "a list of names";
  }
  return "a value";
}

namespace {

std::string number_text(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.10g", x);
  return buf;
}

std::string range_text(const KeySpec& spec) {
  if (spec.min && spec.max) return "[" + number_text(*spec.min) + ", " + number_text(*spec.max) + "]";
  if (spec.min) return ">= " + number_text(*spec.min);
  return "<= " + number_text(*spec.max);
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

std::string last_component(const std::string& key) {
  auto dot = key.rfind('.');
  return dot == std::string::npos ? key : key.substr(dot + 1);
}

ValueType type_of(const Value& value) {
  switch (value.index()) {
    case 0:
      return ValueType::Bool;
    case 1:
      return ValueType::Int;
    case 2:
      return ValueType::Double;
    case 3:
      return ValueType::String;
    case 4:
      return ValueType::IntList;
    case 5:
      return ValueType::DoubleList;
    default:
      return ValueType::StringList;
  }
}

Value validate(const KeySpec& spec, Value value, const std::string& where);

// Why a string cannot be a value, or "". A value must come back unchanged from the
// recipe a checkpoint stores (to_yaml), and yaml-cpp writes invalid UTF-8 and the Unicode
// noncharacters (U+FDD0-FDEF, U+xFFFE, U+xFFFF) in a quoted string back as U+FFFD, and a
// final carriage return unquoted (read back as part of the line break). Control
// characters are never meant in a recipe anyway: a CR is what a script with Windows line
// endings leaves at the end of an argument.
std::string text_problem(const std::string& text) {
  if (!utf8::is_valid(text)) return "the value is not valid UTF-8";
  for (char32_t c : utf8::decode(text)) {
    const bool control = (c < 0x20 && c != '\t' && c != '\n') || c == 0x7F;
    const bool noncharacter = (c >= 0xFDD0 && c <= 0xFDEF) || (c & 0xFFFE) == 0xFFFE;
    if (control || noncharacter) {
      char code[16];
      std::snprintf(code, sizeof code, "U+%04X", static_cast<unsigned>(c));
      return std::string("the value holds the ") + (control ? "control character " : "Unicode noncharacter ") + code;
    }
  }
  return "";
}

}  // namespace

ConfigSchema& ConfigSchema::add(KeySpec spec) {
  auto it = specs_.find(spec.key);
  if (it != specs_.end()) {
    if (it->second.type != spec.type)
      throw Error::for_key(spec.key, "declared twice with different types (" + describe(it->second.type) + ", " +
                                         describe(spec.type) + ")");
    return *this;
  }
  std::string key = spec.key;
  if (spec.default_value) spec.default_value = validate(spec, *spec.default_value, "default");
  specs_.emplace(key, std::move(spec));
  return *this;
}

ConfigSchema& ConfigSchema::add_bool(const std::string& key, bool default_value, const std::string& help) {
  return add({key, ValueType::Bool, Value(default_value), help, std::nullopt, std::nullopt, {}});
}

namespace {
template <typename T>
std::optional<double> as_bound(std::optional<T> bound) {
  return bound ? std::optional<double>(static_cast<double>(*bound)) : std::nullopt;
}
template <typename T>
std::optional<Value> as_value(std::optional<T> v) {
  return v ? std::optional<Value>(Value(*v)) : std::nullopt;
}
}  // namespace

ConfigSchema& ConfigSchema::add_int(const std::string& key, std::optional<int64_t> default_value,
                                    const std::string& help, std::optional<int64_t> min, std::optional<int64_t> max) {
  return add({key, ValueType::Int, as_value(default_value), help, as_bound(min), as_bound(max), {}});
}

ConfigSchema& ConfigSchema::add_double(const std::string& key, std::optional<double> default_value,
                                       const std::string& help, std::optional<double> min, std::optional<double> max) {
  return add({key, ValueType::Double, as_value(default_value), help, min, max, {}});
}

ConfigSchema& ConfigSchema::add_string(const std::string& key, std::optional<std::string> default_value,
                                       const std::string& help, std::vector<std::string> choices) {
  return add({key, ValueType::String, as_value(default_value), help, std::nullopt, std::nullopt, std::move(choices)});
}

ConfigSchema& ConfigSchema::add_int_list(const std::string& key, std::optional<std::vector<int64_t>> default_value,
                                         const std::string& help, std::optional<int64_t> min,
                                         std::optional<int64_t> max) {
  return add({key, ValueType::IntList, as_value(default_value), help, as_bound(min), as_bound(max), {}});
}

ConfigSchema& ConfigSchema::add_double_list(const std::string& key, std::optional<std::vector<double>> default_value,
                                            const std::string& help, std::optional<double> min,
                                            std::optional<double> max) {
  return add({key, ValueType::DoubleList, as_value(default_value), help, min, max, {}});
}

ConfigSchema& ConfigSchema::add_string_list(const std::string& key,
                                            std::optional<std::vector<std::string>> default_value,
                                            const std::string& help, std::vector<std::string> choices) {
  return add(
      {key, ValueType::StringList, as_value(default_value), help, std::nullopt, std::nullopt, std::move(choices)});
}

const KeySpec& ConfigSchema::spec(const std::string& key) const {
  auto it = specs_.find(key);
  if (it == specs_.end()) {
    std::string near = nearest_key(key);
    throw Error("unknown key '" + key + "'" + (near.empty() ? "" : " (did you mean '" + near + "'?)"),
                ErrorKind::bad_option);
  }
  return it->second;
}

std::string ConfigSchema::nearest_key(const std::string& key) const {
  std::string best;
  size_t best_distance = std::max<size_t>(3, key.size() / 3) + 1;
  for (const auto& [candidate, spec] : specs_) {
    size_t d = edit_distance(key, candidate);
    // A key given without its section ("embed_dim" for "model.embed_dim") is close too.
    if (last_component(candidate) == last_component(key)) d = std::min<size_t>(d, 1);
    if (d < best_distance) {
      best_distance = d;
      best = candidate;
    }
  }
  return best;
}

Value ConfigSchema::check(const std::string& key, Value value, const std::string& where) const {
  return validate(spec(key), std::move(value), where);
}

namespace {
Value validate(const KeySpec& s, Value value, const std::string& where) {
  const std::string& key = s.key;
  auto fail = [&](const std::string& message) {
    return Error(where + ": key '" + key + "': " + message, ErrorKind::bad_option);
  };
  ValueType given = type_of(value);
  if (given == ValueType::Int && s.type == ValueType::Double)
    value = static_cast<double>(std::get<int64_t>(value));
  else if (given == ValueType::IntList && s.type == ValueType::DoubleList)
    value =
        std::vector<double>(std::get<std::vector<int64_t>>(value).begin(), std::get<std::vector<int64_t>>(value).end());
  else if (given != s.type)
    throw fail("expected " + describe(s.type) + ", got " + describe(given));

  auto check_range = [&](double x) {
    if (std::isnan(x) || (s.min && x < *s.min) || (s.max && x > *s.max))
      throw fail(number_text(x) + " is out of range " + range_text(s));
  };
  if (s.type == ValueType::Int) check_range(static_cast<double>(std::get<int64_t>(value)));
  if (s.type == ValueType::Double) check_range(std::get<double>(value));
  if (s.type == ValueType::IntList)
    for (int64_t x : std::get<std::vector<int64_t>>(value)) check_range(static_cast<double>(x));
  if (s.type == ValueType::DoubleList)
    for (double x : std::get<std::vector<double>>(value)) check_range(x);
  auto check_text = [&](const std::string& text) {
    const std::string problem = text_problem(text);
    if (!problem.empty()) throw fail(problem);
    if (s.choices.empty() || std::find(s.choices.begin(), s.choices.end(), text) != s.choices.end()) return;
    std::string allowed;
    for (const auto& c : s.choices) allowed += (allowed.empty() ? "" : ", ") + c;
    throw fail("'" + text + "' is not one of: " + allowed);
  };
  if (s.type == ValueType::String) check_text(std::get<std::string>(value));
  if (s.type == ValueType::StringList)
    for (const auto& text : std::get<std::vector<std::string>>(value)) check_text(text);
  return value;
}
}  // namespace

}  // namespace csan::core
