#include "toolkit/core/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace csan {

namespace {
// Byte-at-a-time table for the reflected polynomial 0x82F63B78: the portable path.
constexpr std::array<uint32_t, 256> make_table() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    table[i] = c;
  }
  return table;
}
constexpr std::array<uint32_t, 256> kTable = make_table();

// `c` is the running (inverted) register, not a finished CRC.
uint32_t extend_with_table(uint32_t c, const unsigned char* p, size_t size) {
  for (size_t i = 0; i < size; ++i) c = kTable[(c ^ p[i]) & 0xFF] ^ (c >> 8);
  return c;
}

#if defined(__x86_64__)
// SSE4.2's crc32 instruction computes this very polynomial 8 bytes at a time. Checkpoints
// are checked whole on every load, and the table's one byte per step was several times
// slower than reading the file from the page cache.
__attribute__((target("sse4.2"))) uint32_t extend_with_sse42(uint32_t c, const unsigned char* p, size_t size) {
  for (; size > 0 && (reinterpret_cast<uintptr_t>(p) & 7) != 0; --size) c = _mm_crc32_u8(c, *p++);
  uint64_t wide = c;
  for (; size >= 8; size -= 8, p += 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    wide = _mm_crc32_u64(wide, word);
  }
  c = static_cast<uint32_t>(wide);
  for (; size > 0; --size) c = _mm_crc32_u8(c, *p++);
  return c;
}
#endif

uint32_t extend_register(uint32_t c, const unsigned char* p, size_t size) {
#if defined(__x86_64__)
  static const bool has_sse42 = __builtin_cpu_supports("sse4.2");
  if (has_sse42) return extend_with_sse42(c, p, size);
#endif
  return extend_with_table(c, p, size);
}

}  // namespace

uint32_t crc32c_extend(uint32_t crc, const void* data, size_t size) {
  return extend_register(crc ^ 0xFFFFFFFFu, static_cast<const unsigned char*>(data), size) ^ 0xFFFFFFFFu;
}

uint32_t crc32c(const void* data, size_t size) { return crc32c_extend(0, data, size); }

uint32_t mask_crc32c(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }

}  // namespace csan
