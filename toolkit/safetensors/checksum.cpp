#include "toolkit/safetensors/checksum.h"

#include <algorithm>

#include "toolkit/core/crc32c.h"

namespace csan::safetensors {

std::string checksum_text(uint32_t crc) {
  static const char kHex[] = "0123456789abcdef";
  std::string text(kChecksumDigits, '0');
  for (size_t i = 0; i < kChecksumDigits; ++i) text[i] = kHex[(crc >> (28 - 4 * i)) & 0xF];
  return text;
}

std::optional<uint32_t> checksum_from_text(std::string_view text) {
  if (text.size() != kChecksumDigits) return std::nullopt;
  uint32_t crc = 0;
  for (char c : text) {
    uint32_t digit;
    if (c >= '0' && c <= '9') {
      digit = static_cast<uint32_t>(c - '0');
    } else if (c >= 'a' && c <= 'f') {
      digit = static_cast<uint32_t>(c - 'a' + 10);
    } else {
      return std::nullopt;
    }
    crc = crc << 4 | digit;
  }
  return crc;
}

uint32_t file_checksum(const char* file, size_t size, const std::function<void(size_t, size_t)>& visited) {
  constexpr size_t kChunk = size_t{16} << 20;
  const std::string zeros(kChecksumDigits, '0');
  uint32_t crc = crc32c(file, kChecksumOffset);
  crc = crc32c_extend(crc, zeros.data(), zeros.size());
  for (size_t at = kChecksumOffset + kChecksumDigits; at < size;) {
    const size_t n = std::min(kChunk, size - at);
    crc = crc32c_extend(crc, file + at, n);
    if (visited) visited(at, n);
    at += n;
  }
  return crc;
}

}  // namespace csan::safetensors
