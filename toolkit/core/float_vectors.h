// GCC vector-extension helpers for the hand-vectorized kernels (decoding attention, the
// vocabulary kernels, the small-batch linear layer). Written once, they compile to full
// registers in each clone of a function marked with vector_clones.h's attributes: 8 floats
// are two SSE registers in the default build, one AVX register in x86-64-v3 and later.
// They are inlined into those clones (always_inline), so the ABI of 32- and 64-byte
// vector arguments never applies (the build silences -Wpsabi for the files using them).
#pragma once

#include <cstdint>
#include <cstring>

namespace csan::core {

typedef float Floats8 __attribute__((vector_size(32)));
typedef int32_t Ints8 __attribute__((vector_size(32)));
typedef float Floats16 __attribute__((vector_size(64)));
typedef int32_t Ints16 __attribute__((vector_size(64)));

[[gnu::always_inline]] inline Floats8 load8(const float* p) {
  Floats8 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
[[gnu::always_inline]] inline void store8(float* p, Floats8 v) { std::memcpy(p, &v, sizeof v); }
[[gnu::always_inline]] inline Floats8 broadcast8(float x) { return Floats8{} + x; }
// IEEE max of each lane (a NaN in b is not taken).
[[gnu::always_inline]] inline Floats8 max8(Floats8 a, Floats8 b) { return a > b ? a : b; }
[[gnu::always_inline]] inline float horizontal_max(Floats8 v) {
  float lanes[8];
  std::memcpy(lanes, &v, sizeof lanes);
  float m = lanes[0];
  for (int l = 1; l < 8; ++l) m = lanes[l] > m ? lanes[l] : m;
  return m;
}

// exp(x) for x <= 0 on each lane, with Cephes' single-precision polynomial (about 1 ulp);
// 0 below -87 (and for -inf). Floats: 8 or 16 lanes (Ints: as many int32), the same
// arithmetic on every lane either way.
template <typename Floats, typename Ints>
[[gnu::always_inline]] inline Floats exp_nonpositive(Floats x) {
  const Floats low = Floats{} - 87.0f;
  const Floats clamped = x < low ? low : x;
  const Floats fx = clamped * 1.44269504088896341f + 0.5f;
  Floats n = __builtin_convertvector(__builtin_convertvector(fx, Ints), Floats);
  n = n > fx ? n - 1.0f : n;  // floor
  const Floats r = clamped - n * 0.693359375f + n * 2.12194440e-4f;
  Floats y = Floats{} + 1.9875691500e-4f;
  y = y * r + 1.3981999507e-3f;
  y = y * r + 8.3334519073e-3f;
  y = y * r + 4.1665795894e-2f;
  y = y * r + 1.6666665459e-1f;
  y = y * r + 5.0000001201e-1f;
  y = y * r * r + r + 1.0f;
  const Ints bits = (__builtin_convertvector(n, Ints) + 127) << 23;
  return x < low ? Floats{} : y * (Floats)bits;  // a vector cast reinterprets the bits
}
[[gnu::always_inline]] inline Floats8 exp8_nonpositive(Floats8 x) { return exp_nonpositive<Floats8, Ints8>(x); }

}  // namespace csan::core
