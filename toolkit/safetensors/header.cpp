#include "toolkit/safetensors/header.h"

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "toolkit/core/error.h"
#include "toolkit/core/utf8.h"
#include "toolkit/safetensors/format.h"

namespace csan::safetensors {

namespace {

using json = nlohmann::json;

constexpr size_t kLongestNameShown = 120;

using utf8::printable;

// What a duplicate key is called, by the object it is in: the header itself, the metadata
// map or a tensor's entry.
std::string duplicate_key_message(const std::string& parent, size_t level, const std::string& key) {
  if (level == 1)
    return (key == kMetadataKey ? std::string(kMetadataKey) : "tensor " + in_quotes(key)) + " appears twice";
  if (parent == kMetadataKey) return std::string(kMetadataKey) + " key " + in_quotes(key) + " appears twice";
  return "tensor " + in_quotes(parent) + ": field " + in_quotes(key) + " appears twice";
}

// The JSON text parsed as the header's shape allows: an object of objects holding arrays of
// numbers, nothing deeper (which also bounds the parser's work on crafted input), and no key
// twice in one object (JSON parsers differ on which of two they keep).
json parse_json(std::string_view text, const std::string& where) {
  struct OpenObject {
    std::string key;  // the key it is the value of ("" for the header itself)
    std::set<std::string> keys;
  };
  std::vector<OpenObject> open;
  std::string last_key;
  const json::parser_callback_t on_event = [&](int depth, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
        if (depth > 1)
          fail(where, "header nests deeper than a safetensors header (inside " + in_quotes(last_key) + ")");
        open.push_back({depth == 0 ? std::string() : last_key, {}});
        break;
      case json::parse_event_t::object_end:
        open.pop_back();
        break;
      case json::parse_event_t::array_start:
        if (depth > 2)
          fail(where, "header nests deeper than a safetensors header (inside " + in_quotes(last_key) + ")");
        break;
      case json::parse_event_t::key: {
        std::string key = parsed.get<std::string>();
        if (!open.back().keys.insert(key).second) fail(where, duplicate_key_message(open.back().key, open.size(), key));
        last_key = std::move(key);
        break;
      }
      default:
        break;
    }
    return true;
  };
  try {
    return json::parse(text.begin(), text.end(), on_event);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for numbers that overflow
    std::string what = e.what();
    if (const size_t bracket = what.find("] "); what.rfind("[json.exception.", 0) == 0 && bracket != std::string::npos)
      what.erase(0, bracket + 2);
    fail(where, "header is not valid JSON: " + printable(what));
  }
}

std::map<std::string, std::string> metadata_of(const json& value, const std::string& where) {
  if (!value.is_object())
    fail(where, std::string(kMetadataKey) + " is " + value.type_name() + ", not a map of strings");
  std::map<std::string, std::string> metadata;
  for (const auto& [key, v] : value.items()) {
    if (!v.is_string())
      fail(where, std::string(kMetadataKey) + " " + in_quotes(key) + " is " + v.type_name() + ", not a string");
    metadata.emplace(key, v.get<std::string>());
  }
  return metadata;
}

bool is_count(const json& v) { return v.is_number_unsigned(); }

TensorEntry entry_of(const std::string& name, const json& value, uint64_t data_size, const std::string& where) {
  const std::string tensor = "tensor " + in_quotes(name) + ": ";
  if (!value.is_object()) fail(where, tensor + "entry is " + value.type_name() + ", not {dtype, shape, data_offsets}");
  TensorEntry entry;
  entry.name = name;

  const auto dtype = value.find("dtype");
  if (dtype == value.end()) fail(where, tensor + "no dtype");
  if (!dtype->is_string()) fail(where, tensor + "dtype is " + dtype->type_name() + ", not a string");
  const auto known = dtype_named(dtype->get_ref<const std::string&>());
  if (!known)
    fail(where, tensor + "dtype " + in_quotes(dtype->get_ref<const std::string&>()) + " is not one csan reads (" +
                    std::string(dtype_names()) + ")");
  entry.dtype = *known;

  const auto shape = value.find("shape");
  if (shape == value.end()) fail(where, tensor + "no shape");
  if (!shape->is_array() || !std::all_of(shape->begin(), shape->end(), is_count))
    fail(where, tensor + "shape must be a list of non-negative integers");
  uint64_t elements = 1;
  bool overflow = false;
  for (const auto& dim : *shape) {
    const uint64_t d = dim.get<uint64_t>();
    overflow = overflow || d > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ||
               __builtin_mul_overflow(elements, d, &elements);
    entry.shape.push_back(overflow ? 0 : static_cast<int64_t>(d));
  }
  uint64_t bytes = 0;
  if (overflow || __builtin_mul_overflow(elements, dtype_size(entry.dtype), &bytes))
    fail(where, tensor + "shape " + shape->dump() + " is too large (a dimension or the byte count passes 64 bits)");

  const auto offsets = value.find("data_offsets");
  if (offsets == value.end()) fail(where, tensor + "no data_offsets");
  if (!offsets->is_array() || offsets->size() != 2 || !is_count((*offsets)[0]) || !is_count((*offsets)[1]))
    fail(where, tensor + "data_offsets must be two non-negative integers [BEGIN, END]");
  entry.begin = (*offsets)[0].get<uint64_t>();
  entry.end = (*offsets)[1].get<uint64_t>();
  const std::string offsets_text =
      "data_offsets [" + std::to_string(entry.begin) + ", " + std::to_string(entry.end) + "]";
  if (entry.begin > entry.end) fail(where, tensor + offsets_text + " out of order");
  if (entry.end > data_size)
    fail(where, tensor + offsets_text + " run past the end of the data (" + std::to_string(data_size) + " bytes)");
  if (entry.end - entry.begin != bytes)
    fail(where, tensor + offsets_text + " hold " + std::to_string(entry.end - entry.begin) + " bytes, but " +
                    std::string(dtype_name(entry.dtype)) + " " + shape_text(entry.shape) + " needs " +
                    std::to_string(bytes));
  return entry;
}

// The tensors, ordered by their offsets, must tile [0, data_size): safetensors refuses holes
// (bytes that belong to no tensor could hide another file inside this one) and overlaps.
void check_coverage(const std::vector<TensorEntry>& tensors, uint64_t data_size, const std::string& where) {
  uint64_t covered = 0;
  const TensorEntry* previous = nullptr;
  for (const auto& t : tensors) {
    if (t.begin < covered)
      fail(where, "tensor " + in_quotes(t.name) + ": data_offsets [" + std::to_string(t.begin) + ", " +
                      std::to_string(t.end) + "] overlap those of tensor " + in_quotes(previous->name) + " [" +
                      std::to_string(previous->begin) + ", " + std::to_string(previous->end) + "]");
    if (t.begin > covered)
      fail(where, "bytes [" + std::to_string(covered) + ", " + std::to_string(t.begin) +
                      ") of the data belong to no tensor (a hole before tensor " + in_quotes(t.name) + ")");
    covered = t.end;
    previous = &t;
  }
  if (covered < data_size)
    fail(where, "bytes [" + std::to_string(covered) + ", " + std::to_string(data_size) +
                    ") of the data belong to no tensor" +
                    (previous ? " (after tensor " + in_quotes(previous->name) + ")" : std::string(" (no tensors)")));
}

}  // namespace

std::string in_quotes(std::string_view name) {
  if (name.size() <= kLongestNameShown) return "'" + printable(name) + "'";
  return "'" + printable(name.substr(0, kLongestNameShown)) + "...'";
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

void fail(const std::string& where, const std::string& what) { throw Error(where + ": " + what); }

Header parse_header(std::string_view text, uint64_t data_size, const std::string& where) {
  const json root = parse_json(text, where);
  if (!root.is_object()) fail(where, std::string("header is ") + root.type_name() + ", not a JSON object");
  Header header;
  for (const auto& [name, value] : root.items()) {
    if (name == kMetadataKey) {
      header.metadata = metadata_of(value, where);
    } else {
      header.tensors.push_back(entry_of(name, value, data_size, where));
    }
  }
  std::sort(header.tensors.begin(), header.tensors.end(), [](const TensorEntry& a, const TensorEntry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  check_coverage(header.tensors, data_size, where);
  return header;
}

}  // namespace csan::safetensors
