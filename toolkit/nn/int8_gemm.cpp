#include "toolkit/nn/int8_gemm.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "toolkit/core/cpu_flags.h"
#include "toolkit/core/error.h"

// Functions with this attribute may use AVX-512 and VNNI instructions whatever the rest of
// the build targets; they run only after int8_gemm_available() said yes. (Other compilers
// and processors build without the kernel: int8 products then go to LibTorch.)
#if defined(__x86_64__) && defined(__GNUC__)
#define CSAN_INT8_KERNEL_BUILT 1
#include <immintrin.h>
#define CSAN_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni")))
#else
#define CSAN_INT8_KERNEL_BUILT 0
#endif

namespace csan::nn {

namespace {

constexpr int64_t kPanel = 64;  // output rows per panel: 4 vectors of 16 int32 sums
constexpr int kTileRows = 6;    // rows of x per tile: 6 x 4 accumulators + 4 weights + 1 broadcast of 32 registers
constexpr int64_t kChunkRows = 16 * kTileRows;  // rows of x per work item (its bytes stay in L1)

struct RowQuantization {
  float scale;
  float inverse;
  int32_t zero;
};

// From the row's extremes; the kernel and the reference both call it, so they agree to
// the last bit. A row of zeros (or one that is not finite) gets scale 1 and zero point 0.
RowQuantization row_quantization(float lo, float hi) {
  lo = std::min(lo, 0.0f);
  hi = std::max(hi, 0.0f);
  const float range = hi - lo;
  if (!std::isfinite(range) || !(range > 0)) return {1.0f, 1.0f, 0};
  const float scale = range / 255.0f;
  const float inverse = 1.0f / scale;
  const auto zero = static_cast<int32_t>(std::nearbyint(-lo * inverse));
  return {scale, inverse, std::clamp<int32_t>(zero, 0, 255)};
}

// vcvtps2dq's rounding (to nearest even) and its answer for what does not fit (INT32_MIN).
int32_t round_like_the_kernel(float v) {
  const float r = std::nearbyint(v);
  return r >= -2147483648.0f && r < 2147483648.0f ? static_cast<int32_t>(r) : INT32_MIN;
}

uint8_t quantized(float x, const RowQuantization& q) {
  const int64_t v = int64_t(round_like_the_kernel(x * q.inverse)) + q.zero;
  return static_cast<uint8_t>(std::clamp<int64_t>(v, 0, 255));
}

#if CSAN_INT8_KERNEL_BUILT
CSAN_VNNI void quantize_rows(const float* x, int64_t depth, int64_t padded_depth, int64_t begin, int64_t end,
                             uint8_t* u, RowQuantization* q) {
  for (int64_t m = begin; m < end; ++m) {
    const float* row = x + m * depth;
    __m512 lo = _mm512_setzero_ps(), hi = _mm512_setzero_ps();
    for (int64_t k = 0; k < depth; k += 16) {
      const __mmask16 mask = depth - k >= 16 ? 0xFFFF : __mmask16((1u << (depth - k)) - 1);
      const __m512 v = _mm512_maskz_loadu_ps(mask, row + k);  // masked lanes read 0, inside [lo, hi] anyway
      lo = _mm512_min_ps(lo, v);
      hi = _mm512_max_ps(hi, v);
    }
    q[m] = row_quantization(_mm512_reduce_min_ps(lo), _mm512_reduce_max_ps(hi));
    const __m512 inverse = _mm512_set1_ps(q[m].inverse);
    const __m512i zero = _mm512_set1_epi32(q[m].zero), floor = _mm512_setzero_si512(), ceiling = _mm512_set1_epi32(255);
    uint8_t* out = u + m * padded_depth;
    for (int64_t k = 0; k < depth; k += 16) {
      const __mmask16 mask = depth - k >= 16 ? 0xFFFF : __mmask16((1u << (depth - k)) - 1);
      __m512i v = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_maskz_loadu_ps(mask, row + k), inverse));
      v = _mm512_min_epi32(_mm512_max_epi32(_mm512_add_epi32(v, zero), floor), ceiling);
      _mm_mask_storeu_epi8(out + k, mask, _mm512_cvtepi32_epi8(v));
    }
    std::memset(out + depth, 0, padded_depth - depth);  // meets the weight's zero padding
  }
}

// One row of a tile: its 4 bytes of group g broadcast to all lanes, multiplied with the
// panel's 4 weight vectors into that row's 4 accumulators.
#define CSAN_TILE_ROW(i)                                    \
  if constexpr (R > i) {                                    \
    int32_t four;                                           \
    std::memcpy(&four, rows + i * padded_depth + 4 * g, 4); \
    const __m512i a = _mm512_set1_epi32(four);              \
    acc##i##0 = _mm512_dpbusd_epi32(acc##i##0, a, w0);      \
    acc##i##1 = _mm512_dpbusd_epi32(acc##i##1, a, w1);      \
    acc##i##2 = _mm512_dpbusd_epi32(acc##i##2, a, w2);      \
    acc##i##3 = _mm512_dpbusd_epi32(acc##i##3, a, w3);      \
  }
#define CSAN_TILE_ACCUMULATORS(i) \
  __m512i acc##i##0 = _mm512_setzero_si512(), acc##i##1 = acc##i##0, acc##i##2 = acc##i##0, acc##i##3 = acc##i##0
#define CSAN_TILE_SAVE(i)                                                                       \
  if constexpr (R > i) {                                                                        \
    acc[i][0] = acc##i##0, acc[i][1] = acc##i##1, acc[i][2] = acc##i##2, acc[i][3] = acc##i##3; \
  }

// Rows [m0, m0 + R) of x against one panel: R x 4 vectors of 16 int32 sums stay in
// registers while the groups of 4 inputs go by; each weight vector serves R rows. (Named
// variables, not an array: GCC kept an array of accumulators on the stack.)
// Outputs [first, end) of the weight's rows: what the product asked for (a row range of
// a fused weight); output n goes to column n - first of y (end - first columns) and takes
// bias[n - first].
struct OutputRange {
  int64_t first, end;
  int64_t columns() const { return end - first; }
};

template <int R>
CSAN_VNNI inline void tile(const uint8_t* u, int64_t padded_depth, const RowQuantization* q, const PackedInt8Weight& w,
                           int64_t p, const float* bias, float* y, int64_t m0, OutputRange out_range) {
  static_assert(R >= 1 && R <= 6, "tiles of 1 to 6 rows");
  CSAN_TILE_ACCUMULATORS(0);
  CSAN_TILE_ACCUMULATORS(1);
  CSAN_TILE_ACCUMULATORS(2);
  CSAN_TILE_ACCUMULATORS(3);
  CSAN_TILE_ACCUMULATORS(4);
  CSAN_TILE_ACCUMULATORS(5);
  const int8_t* panel = w.panel(p);
  const uint8_t* rows = u + m0 * padded_depth;
  const int64_t groups = w.groups();
  for (int64_t g = 0; g < groups; ++g, panel += 4 * 64) {
    const __m512i w0 = _mm512_loadu_si512(panel), w1 = _mm512_loadu_si512(panel + 64),
                  w2 = _mm512_loadu_si512(panel + 128), w3 = _mm512_loadu_si512(panel + 192);
    CSAN_TILE_ROW(0) CSAN_TILE_ROW(1) CSAN_TILE_ROW(2) CSAN_TILE_ROW(3) CSAN_TILE_ROW(4) CSAN_TILE_ROW(5)
  }
  __m512i acc[R][4];
  CSAN_TILE_SAVE(0);
  CSAN_TILE_SAVE(1);
  CSAN_TILE_SAVE(2);
  CSAN_TILE_SAVE(3);
  CSAN_TILE_SAVE(4);
  CSAN_TILE_SAVE(5);
  const int64_t columns = out_range.columns();
  for (int j = 0; j < 4; ++j) {
    const int64_t n = p * kPanel + 16 * j;  // the weight row of lane 0
    // Lanes [lo, hi) hold wanted outputs. lo > 0 only where the range starts inside this
    // vector (a range not aligned to 16 rows): those lanes go through a buffer, so that
    // no address before y or the bias is formed.
    const int64_t lo = std::max<int64_t>(0, out_range.first - n), hi = std::min<int64_t>(16, out_range.end - n);
    if (hi <= lo) continue;
    const __mmask16 mask = __mmask16(((1u << hi) - 1) & ~((1u << lo) - 1));
    const __m512i sums = _mm512_loadu_si512(w.row_sums() + n);
    const __m512 scales = _mm512_loadu_ps(w.scales() + n);
    float lanes[16] = {};
    if (bias && lo > 0) std::memcpy(lanes + lo, bias, sizeof(float) * size_t(hi - lo));
    const __m512 b = !bias     ? _mm512_setzero_ps()
                     : lo == 0 ? _mm512_maskz_loadu_ps(mask, bias + (n - out_range.first))
                               : _mm512_maskz_loadu_ps(mask, lanes);
    for (int i = 0; i < R; ++i) {
      const __m512i exact = _mm512_sub_epi32(acc[i][j], _mm512_mullo_epi32(_mm512_set1_epi32(q[m0 + i].zero), sums));
      const __m512 sum = _mm512_cvtepi32_ps(exact);
      const __m512 scale = _mm512_mul_ps(_mm512_set1_ps(q[m0 + i].scale), scales);
      const __m512 out = bias ? _mm512_fmadd_ps(sum, scale, b) : _mm512_mul_ps(sum, scale);
      float* row = y + (m0 + i) * columns;
      if (lo == 0) {
        _mm512_mask_storeu_ps(row + (n - out_range.first), mask, out);
      } else {
        _mm512_storeu_ps(lanes, out);
        std::memcpy(row, lanes + lo, sizeof(float) * size_t(hi - lo));
      }
    }
  }
}

#undef CSAN_TILE_ROW
#undef CSAN_TILE_ACCUMULATORS
#undef CSAN_TILE_SAVE

// Work items: (panel, chunk of kChunkRows rows), panel-major, so that a thread's items
// mostly share one panel of weights while it sits in L1/L2.
CSAN_VNNI void multiply_items(const uint8_t* u, int64_t padded_depth, const RowQuantization* q, int64_t rows,
                              const PackedInt8Weight& w, const float* bias, float* y, OutputRange out_range,
                              int64_t begin, int64_t end) {
  const int64_t chunks = (rows + kChunkRows - 1) / kChunkRows, first_panel = out_range.first / kPanel;
  for (int64_t item = begin; item < end; ++item) {
    const int64_t p = first_panel + item / chunks, first = (item % chunks) * kChunkRows;
    const int64_t last = std::min(rows, first + kChunkRows);
    int64_t m = first;
    for (; m + kTileRows <= last; m += kTileRows) tile<kTileRows>(u, padded_depth, q, w, p, bias, y, m, out_range);
    switch (last - m) {
      case 5:
        tile<5>(u, padded_depth, q, w, p, bias, y, m, out_range);
        break;
      case 4:
        tile<4>(u, padded_depth, q, w, p, bias, y, m, out_range);
        break;
      case 3:
        tile<3>(u, padded_depth, q, w, p, bias, y, m, out_range);
        break;
      case 2:
        tile<2>(u, padded_depth, q, w, p, bias, y, m, out_range);
        break;
      case 1:
        tile<1>(u, padded_depth, q, w, p, bias, y, m, out_range);
        break;
      default:
        break;
    }
  }
}

#endif  // CSAN_INT8_KERNEL_BUILT

void check_operands(const torch::Tensor& x, int64_t depth, int64_t rows, const torch::Tensor& bias) {
  TORCH_CHECK(x.scalar_type() == torch::kFloat && x.device().is_cpu() && x.dim() >= 1,
              "int8_gemm: x must be a float CPU tensor");
  TORCH_CHECK(x.size(-1) == depth, "int8_gemm: x has ", x.size(-1), " features, the weight ", depth);
  TORCH_CHECK(!bias.defined() || (bias.scalar_type() == torch::kFloat && bias.numel() == rows),
              "int8_gemm: the bias must be float with one value per output");
}

std::vector<int64_t> output_shape(const torch::Tensor& x, int64_t rows) {
  std::vector<int64_t> shape = x.sizes().vec();
  shape.back() = rows;
  return shape;
}

}  // namespace

bool int8_gemm_available() {
  static const bool available = CSAN_INT8_KERNEL_BUILT && core::cpu_has("avx512f") && core::cpu_has("avx512bw") &&
                                core::cpu_has("avx512vl") && core::cpu_has("avx512dq") && core::cpu_has("avx512_vnni");
  return available;
}

PackedInt8Weight::PackedInt8Weight(const torch::Tensor& values, const torch::Tensor& scales)
    : rows_(values.size(0)), depth_(values.dim() == 2 ? values.size(1) : 0) {
  TORCH_CHECK(values.dim() == 2 && values.scalar_type() == torch::kChar, "PackedInt8Weight: int8 values [N, K]");
  TORCH_CHECK(scales.dim() == 1 && scales.size(0) == rows_, "PackedInt8Weight: one scale per row");
  const torch::Tensor v = values.contiguous();
  const torch::Tensor s = scales.to(torch::kFloat).contiguous();
  const int8_t* src = v.data_ptr<int8_t>();
  const int64_t padded_rows = panels() * kPanel, G = groups();
  packed_.assign(size_t(panels() * G * 4 * 64), 0);
  row_sums_.assign(size_t(padded_rows), 0);
  scales_.assign(size_t(padded_rows), 0.0f);
  std::copy(s.data_ptr<float>(), s.data_ptr<float>() + rows_, scales_.begin());
  for (int64_t n = 0; n < rows_; ++n) {
    const int64_t p = n / kPanel, j = (n % kPanel) / 16, lane = n % 16;
    for (int64_t k = 0; k < depth_; ++k) {
      const int8_t value = src[n * depth_ + k];
      packed_[size_t(((p * G + k / 4) * 4 + j) * 64 + lane * 4 + k % 4)] = value;
      row_sums_[size_t(n)] += value;
    }
  }
}

void PackedInt8Weight::unpack_row(int64_t n, int8_t* out) const {
  TORCH_CHECK(n >= 0 && n < rows_, "PackedInt8Weight: row ", n, " of ", rows_);
  const int64_t p = n / kPanel, j = (n % kPanel) / 16, lane = n % 16, G = groups();
  for (int64_t k = 0; k < depth_; ++k) out[k] = packed_[size_t(((p * G + k / 4) * 4 + j) * 64 + lane * 4 + k % 4)];
}

torch::Tensor int8_gemm(const torch::Tensor& x, const PackedInt8Weight& weight, const torch::Tensor& bias) {
  return int8_gemm(x, weight, 0, weight.rows(), bias);
}

torch::Tensor int8_gemm(const torch::Tensor& x, const PackedInt8Weight& weight, int64_t first, int64_t count,
                        const torch::Tensor& bias) {
  if (!int8_gemm_available()) throw Error("internal: int8_gemm on a CPU without AVX512-VNNI");
  TORCH_CHECK(first >= 0 && count >= 0 && first + count <= weight.rows(), "int8_gemm: rows [", first, ", ",
              first + count, ") of a weight of ", weight.rows());
  check_operands(x, weight.depth(), count, bias);
  const OutputRange out_range{first, first + count};
  const int64_t depth = weight.depth(), padded_depth = 4 * weight.groups();
  const torch::Tensor flat = x.reshape({-1, depth}).contiguous();
  const int64_t rows = flat.size(0);
  torch::Tensor y = torch::empty({rows, count}, x.options());
  if (rows == 0 || count == 0) return y.view(output_shape(x, count));
  const torch::Tensor b = bias.defined() ? bias.contiguous() : bias;
  torch::Tensor u = torch::empty({rows, padded_depth}, torch::kByte);
  std::vector<RowQuantization> q(static_cast<size_t>(rows));
  const float* xp = flat.data_ptr<float>();
  uint8_t* up = u.data_ptr<uint8_t>();
#if CSAN_INT8_KERNEL_BUILT
  at::parallel_for(0, rows, std::max<int64_t>(1, 65536 / std::max<int64_t>(1, depth)), [&](int64_t begin, int64_t end) {
    quantize_rows(xp, depth, padded_depth, begin, end, up, q.data());
  });
  // The panels holding the range: where it is aligned to them (a fused weight's q, k, v
  // of d 512), exactly its rows.
  const int64_t panels = (out_range.end + kPanel - 1) / kPanel - out_range.first / kPanel;
  const int64_t chunks = (rows + kChunkRows - 1) / kChunkRows, items = panels * chunks;
  // A thread is worth waking for about a million multiply-adds.
  const int64_t item_work = std::min(rows, kChunkRows) * kPanel * padded_depth;
  const int64_t grain = std::max<int64_t>(1, (int64_t(1) << 20) / std::max<int64_t>(1, item_work));
  const float* bp = b.defined() ? b.data_ptr<float>() : nullptr;
  float* yp = y.data_ptr<float>();
  at::parallel_for(0, items, grain, [&](int64_t begin, int64_t end) {
    multiply_items(up, padded_depth, q.data(), rows, weight, bp, yp, out_range, begin, end);
  });
#endif
  return y.view(output_shape(x, count));
}

torch::Tensor int8_gemm_reference(const torch::Tensor& x, const torch::Tensor& values, const torch::Tensor& scales,
                                  const torch::Tensor& bias) {
  TORCH_CHECK(values.dim() == 2 && values.scalar_type() == torch::kChar, "int8_gemm_reference: int8 values [N, K]");
  const int64_t n_out = values.size(0), depth = values.size(1);
  check_operands(x, depth, n_out, bias);
  const torch::Tensor flat = x.reshape({-1, depth}).contiguous(), v = values.contiguous(),
                      s = scales.to(torch::kFloat).contiguous(), b = bias.defined() ? bias.contiguous() : bias;
  const int64_t rows = flat.size(0);
  torch::Tensor y = torch::empty({rows, n_out}, x.options());
  const float* xp = flat.data_ptr<float>();
  const int8_t* vp = v.data_ptr<int8_t>();
  std::vector<uint8_t> u(static_cast<size_t>(depth));
  for (int64_t m = 0; m < rows; ++m) {
    const float* row = xp + m * depth;
    float lo = 0, hi = 0;
    for (int64_t k = 0; k < depth; ++k) lo = std::min(lo, row[k]), hi = std::max(hi, row[k]);
    const RowQuantization q = row_quantization(lo, hi);
    for (int64_t k = 0; k < depth; ++k) u[size_t(k)] = quantized(row[k], q);
    for (int64_t n = 0; n < n_out; ++n) {
      int32_t dot = 0, sum = 0;
      for (int64_t k = 0; k < depth; ++k) dot += int32_t(u[size_t(k)]) * vp[n * depth + k], sum += vp[n * depth + k];
      const auto exact = static_cast<float>(dot - q.zero * sum);
      const float scale = q.scale * s.data_ptr<float>()[n];
      y.data_ptr<float>()[m * n_out + n] = b.defined() ? std::fma(exact, scale, b.data_ptr<float>()[n]) : exact * scale;
    }
  }
  return y.view(output_shape(x, n_out));
}

}  // namespace csan::nn
