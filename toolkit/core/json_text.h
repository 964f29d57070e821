// csan's JSON files (run.json, metrics.jsonl, preprocess.json, csan-score --task tagging
// -f json) written and read through nlohmann::json, with one-line errors that name the
// file, the place and the field. Torch-free.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>

namespace csan::core {

// The layout csan's files have always had: a container whose items are all scalars on
// one line with Python's separators ({"a": 1, "b": "x"}, [1, 2]), any other container one
// item per line, indented by two spaces a level. nlohmann writes every scalar (escaping;
// numbers in shortest round-trip form, non-finite ones as null; invalid UTF-8 as U+FFFD);
// its own dump() offers only everything on one line without spaces, or every item on a
// line of its own. `items_on_lines` gives the outermost container one item per line even
// when they are all scalars (preprocess.json).
std::string json_text(const nlohmann::ordered_json& value, bool items_on_lines = false);

// The JSON value of `text`, read from `origin` (a file name, for messages). Malformed
// JSON is a csan::Error "ORIGIN: malformed JSON at line L, column C: what was expected".
nlohmann::ordered_json parse_json(const std::string& text, const std::string& origin);
nlohmann::ordered_json read_json_file(const std::string& path);
// One line of a JSON-lines file (without its newline): "PATH:N: malformed JSON at column C: ...".
nlohmann::ordered_json parse_json_line(const std::string& line, const std::string& path, size_t line_number);

// Members of a JSON object read from `origin`: "ORIGIN: no KEY" when absent, "ORIGIN:
// KEY is not a string (got 3)" when of another type.
const nlohmann::ordered_json& json_member(const nlohmann::ordered_json& object, const std::string& key,
                                          const std::string& origin);
std::string json_string_member(const nlohmann::ordered_json& object, const std::string& key, const std::string& origin);
int64_t json_integer_member(const nlohmann::ordered_json& object, const std::string& key, const std::string& origin);

}  // namespace csan::core
