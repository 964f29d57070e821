// csan's checksum inside a safetensors file. The format has none of its own, so csan keeps
// a CRC-32C of the whole file in the header's __metadata__, as the first entry of the
// header: the file starts with the 8-byte length, then
//   {"__metadata__":{"csan.crc32c":"XXXXXXXX", ...
// where XXXXXXXX is the CRC in lowercase hex, computed over every byte of the file with
// those eight digits counted as '0's. The writer reserves the field with zeros, streams
// the tensors while computing the CRC, and fills the digits in at the end; readers that
// do not know the field (Python's safetensors) see one more metadata string. A file whose
// header does not start with that text has no checksum csan can verify.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "toolkit/safetensors/format.h"

namespace csan::safetensors {

// The metadata key, and the header's first bytes when csan wrote the file.
constexpr std::string_view kChecksumKey = "csan.crc32c";
constexpr std::string_view kChecksumPrefix = R"({"__metadata__":{"csan.crc32c":")";
constexpr size_t kChecksumDigits = 8;
// Where the digits lie in the file (after the 8-byte length and the prefix).
constexpr size_t kChecksumOffset = kLengthBytes + kChecksumPrefix.size();

// "0123abcd"; and back, nullopt unless `text` is exactly eight lowercase hex digits.
std::string checksum_text(uint32_t crc);
std::optional<uint32_t> checksum_from_text(std::string_view text);

// The CRC of `size` file bytes as defined above (the digits at kChecksumOffset taken as
// '0's; the file must reach past them). `visited(offset, length)` hears of each 16 MiB
// passed, so that a reader of a mapped file can let those pages go.
uint32_t file_checksum(const char* file, size_t size, const std::function<void(size_t, size_t)>& visited = {});

}  // namespace csan::safetensors
