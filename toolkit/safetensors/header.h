// Reading a safetensors header: the JSON text parsed strictly (valid UTF-8, no duplicate
// key, nothing nested deeper than a header is) and every entry checked against the data
// region it describes, so that the tensors it yields can be read without further checks.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "toolkit/safetensors/dtype.h"

namespace csan::safetensors {

struct TensorEntry {
  std::string name;
  Dtype dtype = Dtype::kU8;
  std::vector<int64_t> shape;
  uint64_t begin = 0;  // data_offsets, relative to the start of the data region
  uint64_t end = 0;
};

struct Header {
  std::map<std::string, std::string> metadata;  // __metadata__, all of it
  std::vector<TensorEntry> tensors;             // ordered by data_offsets
};

// Parses a header and checks it against a data region of `data_size` bytes: the text is a
// JSON object; __metadata__ maps strings to strings; each tensor's dtype is known, its shape
// non-negative integers whose element count does not overflow, its data_offsets [BEGIN, END]
// in order, inside the region and END - BEGIN the bytes dtype and shape need; the tensors
// cover the region exactly. Throws csan::Error "WHERE: ..." naming the tensor and field.
Header parse_header(std::string_view text, uint64_t data_size, const std::string& where);

// Throws csan::Error "WHERE: WHAT": the layer's one-line errors name the file (or the
// header's source) first.
[[noreturn]] void fail(const std::string& where, const std::string& what);

// A name for a one-line message: in single quotes, control characters escaped, cut short
// when very long.
std::string in_quotes(std::string_view name);

// "[2, 3]".
std::string shape_text(const std::vector<int64_t>& shape);

}  // namespace csan::safetensors
