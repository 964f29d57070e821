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
__attribute__((target("sse4.2"))) uint32_t one_stream_sse42(uint32_t c, const unsigned char* p, size_t size) {
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

// Three streams at once. The instruction takes 3 cycles and a core can start one every
// cycle, so a single chain of them leaves two thirds of the unit idle (an 800 MB
// checkpoint: 0.1 s of CRC on every write and load). Each block of 3 x kLane bytes is cut
// into three lanes whose registers are computed side by side, the second and third from
// zero, and then joined. Feeding bytes to the register is linear in it over GF(2):
//   reg(r, A B) = shift_|B|(reg(r, A)) xor reg(0, B),
// where shift_n(x) is the register after n zero bytes fed to x. shift_kLane is a 32x32
// bit matrix, applied a byte of x at a time through four tables of 256 entries.
constexpr size_t kLane = 8192;

struct LaneShift {
  uint32_t table[4][256];
};

__attribute__((target("sse4.2"))) LaneShift make_lane_shift() {
  uint32_t column[32];  // shift_kLane of each single bit
  for (int bit = 0; bit < 32; ++bit) {
    uint64_t x = uint64_t{1} << bit;
    for (size_t i = 0; i < kLane / 8; ++i) x = _mm_crc32_u64(x, 0);
    column[bit] = static_cast<uint32_t>(x);
  }
  LaneShift shift{};
  for (int k = 0; k < 4; ++k)
    for (uint32_t b = 0; b < 256; ++b)
      for (int bit = 0; bit < 8; ++bit)
        if (b >> bit & 1) shift.table[k][b] ^= column[8 * k + bit];
  return shift;
}

uint32_t shift_by_lane(const LaneShift& s, uint32_t x) {
  return s.table[0][x & 0xFF] ^ s.table[1][x >> 8 & 0xFF] ^ s.table[2][x >> 16 & 0xFF] ^ s.table[3][x >> 24];
}

__attribute__((target("sse4.2"))) uint32_t extend_with_sse42(uint32_t c, const unsigned char* p, size_t size) {
  if (size < 3 * kLane) return one_stream_sse42(c, p, size);
  static const LaneShift shift = make_lane_shift();
  for (; (reinterpret_cast<uintptr_t>(p) & 7) != 0; --size) c = _mm_crc32_u8(c, *p++);
  for (; size >= 3 * kLane; size -= 3 * kLane, p += 3 * kLane) {
    uint64_t a = c, b = 0, d = 0;
    for (size_t i = 0; i < kLane; i += 8) {
      uint64_t wa, wb, wd;
      std::memcpy(&wa, p + i, 8);
      std::memcpy(&wb, p + kLane + i, 8);
      std::memcpy(&wd, p + 2 * kLane + i, 8);
      a = _mm_crc32_u64(a, wa);
      b = _mm_crc32_u64(b, wb);
      d = _mm_crc32_u64(d, wd);
    }
    c = shift_by_lane(shift, shift_by_lane(shift, static_cast<uint32_t>(a)) ^ static_cast<uint32_t>(b)) ^
        static_cast<uint32_t>(d);
  }
  return one_stream_sse42(c, p, size);
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
