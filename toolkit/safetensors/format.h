// The safetensors layout (https://github.com/huggingface/safetensors):
//   8 bytes   N, the header's length, unsigned little-endian
//   N bytes   a UTF-8 JSON object: {"NAME": {"dtype": "F32", "shape": [2, 3],
//             "data_offsets": [BEGIN, END]}, ..., "__metadata__": {"key": "value", ...}}
//             (may be padded with spaces)
//   the rest  the data region: each tensor's bytes (row-major, little-endian) at
//             [BEGIN, END) relative to the region's start; the tensors cover it exactly,
//             without overlap or hole.
// csan's writer pads the header so that the data starts at a multiple of kDataAlignment
// and orders the tensors by decreasing element size, so every tensor of a file it wrote is
// aligned to its element size in a mapping of the file and can be used where it lies.
// (Design note: how checkpoint format 3 maps onto this is at the end of this file.)
#pragma once

#include <cstddef>
#include <cstdint>

namespace csan::safetensors {

constexpr size_t kLengthBytes = 8;
// safetensors' own reader refuses a longer header; so do csan's reader and writer.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;
// Where the data region starts in files csan writes (a cache line; mappings start on a page).
constexpr size_t kDataAlignment = 64;
// The reserved key of the header's metadata map.
constexpr const char* kMetadataKey = "__metadata__";

}  // namespace csan::safetensors
