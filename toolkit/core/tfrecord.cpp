#include "toolkit/core/tfrecord.h"

#include <cstdint>

#include "toolkit/core/crc32c.h"
#include "toolkit/core/error.h"

namespace csan {

namespace {
void append_le(std::string& out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xFF));
}
uint64_t read_le(std::string_view bytes, size_t at, int count) {
  uint64_t value = 0;
  for (int i = 0; i < count; ++i) value |= uint64_t(static_cast<unsigned char>(bytes[at + i])) << (8 * i);
  return value;
}
}  // namespace

std::string frame_tfrecord(std::string_view data) {
  std::string out;
  out.reserve(data.size() + 16);
  append_le(out, data.size(), 8);
  append_le(out, mask_crc32c(crc32c(out.data(), 8)), 4);
  out.append(data);
  append_le(out, mask_crc32c(crc32c(data)), 4);
  return out;
}

TfRecordScan scan_tfrecords(std::string_view bytes, const std::string& origin) {
  TfRecordScan scan;
  size_t at = 0;
  while (bytes.size() - at >= 12) {
    const uint64_t length = read_le(bytes, at, 8);
    if (read_le(bytes, at + 8, 4) != mask_crc32c(crc32c(bytes.data() + at, 8)))
      throw Error(origin + ": byte " + std::to_string(at) + ": corrupt TFRecord (length CRC mismatch)");
    if (bytes.size() - at < 16 || length > bytes.size() - at - 16) break;  // not fully written yet
    const std::string_view data = bytes.substr(at + 12, length);
    if (read_le(bytes, at + 12 + length, 4) != mask_crc32c(crc32c(data)))
      throw Error(origin + ": byte " + std::to_string(at) + ": corrupt TFRecord (data CRC mismatch)");
    scan.records.push_back({data, at, static_cast<size_t>(length) + 16});
    at += length + 16;
  }
  scan.complete_bytes = at;
  return scan;
}

}  // namespace csan
