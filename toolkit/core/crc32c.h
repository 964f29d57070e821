// CRC-32C (Castagnoli), the checksum of TFRecord framing and of csan's safetensors
// checkpoints, and TensorFlow's "masked" form of it. Masking exists because a CRC over
// bytes that themselves embed CRCs is weak; the rotation and constant make the stored
// value differ from any raw CRC in the data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace csan {

uint32_t crc32c(const void* data, size_t size);
inline uint32_t crc32c(std::string_view bytes) { return crc32c(bytes.data(), bytes.size()); }
// The CRC of A followed by `data`, given crc = crc32c(A): a file's checksum computed piece
// by piece as it is written or read. crc32c_extend(0, data, size) == crc32c(data, size).
uint32_t crc32c_extend(uint32_t crc, const void* data, size_t size);

// ((crc >> 15) | (crc << 17)) + 0xa282ead8, as TFRecord files store it.
uint32_t mask_crc32c(uint32_t crc);

}  // namespace csan
