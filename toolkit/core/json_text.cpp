#include "toolkit/core/json_text.h"

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>

#include "toolkit/core/atomic_file.h"
#include "toolkit/core/error.h"

namespace csan::core {

namespace {

using Json = nlohmann::ordered_json;

std::string scalar_text(const Json& value) {
  return value.dump(-1, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
}

bool holds_only_scalars(const Json& container) {
  for (const auto& item : container)
    if (item.is_structured()) return false;
  return true;
}

void append(std::string& out, const Json& value, int depth, bool items_on_lines) {
  if (!value.is_structured()) {
    out += scalar_text(value);
    return;
  }
  const bool object = value.is_object();
  const bool one_line = !(items_on_lines && !value.empty()) && holds_only_scalars(value);
  const std::string indent = one_line ? "" : "\n" + std::string(2 * (depth + 1), ' ');
  out += object ? '{' : '[';
  bool first = true;
  for (auto it = value.begin(); it != value.end(); ++it, first = false) {
    out += first ? indent : (one_line ? ", " : "," + indent);
    if (object) out += scalar_text(Json(it.key())) + ": ";
    append(out, it.value(), depth + 1, false);
  }
  if (!one_line) out += "\n" + std::string(2 * depth, ' ');
  out += object ? '}' : ']';
}

struct ParseProblem {
  size_t line = 1, column = 1;
  std::string what;  // "syntax error while parsing object - unexpected '}'; expected ..."
};

// Where nlohmann stopped (the last character it read, 1-based e.byte) as a line and
// column of `text`, and its description without the "[json.exception...] parse error at
// line L, column C: " prefix (its own column restarts after a newline it only peeked at).
ParseProblem problem_of(const Json::parse_error& e, const std::string& text) {
  ParseProblem p;
  const size_t last = std::min<size_t>(e.byte > 0 ? e.byte - 1 : 0, text.size());
  for (size_t i = 0; i < last; ++i) {
    if (text[i] == '\n') {
      ++p.line;
      p.column = 1;
    } else {
      ++p.column;
    }
  }
  p.what = e.what();
  const size_t at = p.what.find("parse error");
  const size_t colon = at == std::string::npos ? std::string::npos : p.what.find(": ", at);
  if (colon != std::string::npos) p.what = p.what.substr(colon + 2);
  return p;
}

// The value as a message quotes it, cut short.
std::string excerpt(const Json& value) {
  const std::string text = scalar_text(value);
  return text.size() > 40 ? text.substr(0, 37) + "..." : text;
}

}  // namespace

std::string json_text(const Json& value, bool items_on_lines) {
  std::string out;
  append(out, value, 0, items_on_lines);
  return out;
}

// nlohmann's out_of_range (a number such as 1e999 that overflows a double) has no position:
// its description without the "[json.exception.out_of_range.406] " prefix.
std::string overflow_of(const Json::out_of_range& e) {
  std::string what = e.what();
  if (const size_t bracket = what.find("] "); bracket != std::string::npos) what.erase(0, bracket + 2);
  return what;
}

Json parse_json(const std::string& text, const std::string& origin) {
  try {
    return Json::parse(text);
  } catch (const Json::parse_error& e) {
    const ParseProblem p = problem_of(e, text);
    throw Error(origin + ": malformed JSON at line " + std::to_string(p.line) + ", column " + std::to_string(p.column) +
                ": " + p.what);
  } catch (const Json::out_of_range& e) {
    throw Error(origin + ": malformed JSON: " + overflow_of(e));
  }
}

Json parse_json_line(const std::string& line, const std::string& path, size_t line_number) {
  try {
    return Json::parse(line);
  } catch (const Json::parse_error& e) {
    const ParseProblem p = problem_of(e, line);
    throw Error::at(path, static_cast<long>(line_number),
                    "malformed JSON at column " + std::to_string(p.column) + ": " + p.what);
  } catch (const Json::out_of_range& e) {
    throw Error::at(path, static_cast<long>(line_number), "malformed JSON: " + overflow_of(e));
  }
}

Json read_json_file(const std::string& path) { return parse_json(read_file(path), path); }

const Json& json_member(const Json& object, const std::string& key, const std::string& origin) {
  if (!object.is_object()) throw Error(origin + ": not a JSON object (got " + excerpt(object) + ")");
  const auto it = object.find(key);
  if (it == object.end()) throw Error(origin + ": no " + key);
  return *it;
}

std::string json_string_member(const Json& object, const std::string& key, const std::string& origin) {
  const Json& value = json_member(object, key, origin);
  if (!value.is_string()) throw Error(origin + ": " + key + " is not a string (got " + excerpt(value) + ")");
  return value.get<std::string>();
}

int64_t json_integer_member(const Json& object, const std::string& key, const std::string& origin) {
  const Json& value = json_member(object, key, origin);
  if (!value.is_number_integer() ||
      (value.is_number_unsigned() && value.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max())))
    throw Error(origin + ": " + key + " is not an integer (got " + excerpt(value) + ")");
  return value.get<int64_t>();
}

}  // namespace csan::core
