#include "toolkit/nn/decoding_attention.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "toolkit/core/float_vectors.h"
#include "toolkit/core/vector_clones.h"

namespace csan::nn {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// A cached key or value element as float: float32 as it is, bf16 (stored as its upper 16
// bits) widened exactly by a shift, which vectorizes like the float loads.
inline float widen(float x) { return x; }
inline float widen(c10::BFloat16 x) {
  const uint32_t bits = uint32_t(x.x) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// Independent partial sums so the compiler can keep them in vector lanes (a single
// running float sum would have to be added in order).
template <typename Cached>
inline float dot(const float* a, const Cached* b, int64_t n) {
  constexpr int64_t kLanes = 16;
  float lanes[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int64_t l = 0; l < kLanes; ++l) lanes[l] += a[i + l] * widen(b[i + l]);
  float sum = 0;
  for (int64_t l = 0; l < kLanes; ++l) sum += lanes[l];
  for (; i < n; ++i) sum += a[i] * widen(b[i]);
  return sum;
}

struct DecodingGeometry {
  int64_t groups, heads, head_dim, tk;
  int64_t q_row, k_batch, k_head, k_row, v_batch, v_head, v_row;  // strides (elements)
  float scaling;
  int64_t bias_row = 0;  // stride between query rows' biases (0: one for all)
};

// One (key row, head) pair: its G query rows against its Tk cached positions. k and v
// point at head h of stored row 0; position j of this pair is in stored row rows[j]
// (beam history), or `row` when rows is null. bias: the first query row's bias for this
// head ([Tk], rows g.bias_row apart) or null. scores: scratch of G * Tk floats; out: the
// first query row's context, rows out_row apart.
// Cached: float or c10::BFloat16 (compact caches, IncrementalState::set_compact_type).
template <typename Cached>
[[gnu::always_inline]] inline void attend_pair(const DecodingGeometry& g, const float* q, const Cached* k,
                                               const Cached* v, const int64_t* rows, int64_t row, const bool* padding,
                                               const float* bias, float* scores, float* out, int64_t out_row) {
  const int64_t d = g.head_dim, tk = g.tk;
  for (int64_t j = 0; j < tk; ++j) {
    const bool hidden = padding && padding[j];
    const Cached* key = k + (rows ? rows[j] : row) * g.k_batch + j * g.k_row;
    for (int64_t r = 0; r < g.groups; ++r)
      scores[r * tk + j] = hidden ? kNegInf : g.scaling * dot(q + r * g.q_row, key, d);
  }
  if (bias)
    for (int64_t r = 0; r < g.groups; ++r)
      for (int64_t j = 0; j < tk; ++j) scores[r * tk + j] += bias[r * g.bias_row + j];
  for (int64_t r = 0; r < g.groups; ++r) {
    float* s = scores + r * tk;
    float* o = out + r * out_row;
    std::fill(o, o + d, 0.0f);
    float max = kNegInf;
    for (int64_t j = 0; j < tk; ++j) max = std::max(max, s[j]);
    if (max == kNegInf) continue;  // nothing visible: zero context
    float sum = 0;
    for (int64_t j = 0; j < tk; ++j) sum += (s[j] = std::exp(s[j] - max));
    const float inv = 1.0f / sum;
    for (int64_t j = 0; j < tk; ++j) {
      const float p = s[j] * inv;
      const Cached* value = v + (rows ? rows[j] : row) * g.v_batch + j * g.v_row;
      for (int64_t l = 0; l < d; ++l) o[l] += p * widen(value[l]);
    }
  }
}

// The same pair with the head width D a constant (64 in every Transformer shape csan ships:
// base, big, OPUS-MT, the bench models), vectorized by hand (GCC's vector extensions,
// core/float_vectors.h) where attend_pair's loops are not:
//  - scores: attend_pair ends each key's dot product with 16 dependent scalar additions,
//    which cost more than the key's multiplications; here each key's products gather in
//    the 8 lanes of one vector, and 8 keys' lanes are summed at once (sums_of_8);
//  - softmax: 8 exponentials at a time (Cephes' polynomial, about 1 ulp from std::exp,
//    which as a call per key took a third of the pair's time);
//  - weighted sum: the D outputs stay in registers over all positions instead of being
//    loaded and stored at each one.
// The sums run in another order than attend_pair's: the two agree to float rounding.
// scores: G rows of tk rounded up to 8 floats (the padding lanes hold -inf, then 0).
using core::Floats8;
using core::load8;
using Halves8 = uint16_t __attribute__((vector_size(16)));

[[gnu::always_inline]] inline Floats8 load8(const c10::BFloat16* p) {  // widened as widen() does
  Halves8 h;
  std::memcpy(&h, p, sizeof h);
  // Each bf16 becomes the upper half of a float whose lower half is zero (two
  // instructions on AVX2; a convert-and-shift took five).
  const Halves8 zero = {};
  return reinterpret_cast<Floats8>(__builtin_shufflevector(zero, h, 0, 8, 0, 9, 0, 10, 0, 11, 0, 12, 0, 13, 0, 14, 0, 15));
}

// Sums of 8 vectors in the lanes of one: lane t = the sum of v[t]'s 8 lanes (a tree of
// pairwise additions across vectors, 7 shuffle pairs in all, instead of 8 horizontal sums).
[[gnu::always_inline]] inline Floats8 sums_of_8(const Floats8 (&v)[8]) {
  using Index = int32_t __attribute__((vector_size(32)));
  // Adjacent lanes added: a's pairs in lanes 0-1 and 4-5, b's in 2-3 and 6-7.
  const auto pairs = [](Floats8 a, Floats8 b) {
    return __builtin_shuffle(a, b, Index{0, 2, 8, 10, 4, 6, 12, 14}) +
           __builtin_shuffle(a, b, Index{1, 3, 9, 11, 5, 7, 13, 15});
  };
  const Floats8 v01 = pairs(v[0], v[1]), v23 = pairs(v[2], v[3]), v45 = pairs(v[4], v[5]), v67 = pairs(v[6], v[7]);
  // Lanes 0-3: v0, v1, v2, v3 over their first halves; 4-7: the same over the second halves.
  const Floats8 v0123 = pairs(v01, v23), v4567 = pairs(v45, v67);
  return __builtin_shuffle(v0123, v4567, Index{0, 1, 2, 3, 8, 9, 10, 11}) +
         __builtin_shuffle(v0123, v4567, Index{4, 5, 6, 7, 12, 13, 14, 15});
}

inline int64_t padded_to_8(int64_t n) { return (n + 7) / 8 * 8; }

// Up to this many keys (the first decoding steps) a block of 8 and a vector softmax cost more
// than attend_pair's loop (bench-decoding-attention, one thread: 1 key 35 against 51 us, 2 keys
// 50 against 65, 3 keys 72 against 74).
constexpr int64_t kFewestKeysForBlocks = 2;

template <int D, typename Cached>
[[gnu::always_inline]] inline void attend_pair_fixed(const DecodingGeometry& g, const float* q, const Cached* k,
                                                     const Cached* v, const int64_t* rows, int64_t row,
                                                     const bool* padding, const float* bias, float* scores,
                                                     float* out, int64_t out_row) {
  static_assert(D % 8 == 0, "whole vectors of 8 floats");
  const int64_t tk = g.tk, stride = padded_to_8(tk);
  const Floats8 hidden = core::broadcast8(kNegInf);
  for (int64_t r = 0; r < g.groups; ++r) {
    const float* qr = q + r * g.q_row;
    for (int64_t j0 = 0; j0 < tk; j0 += 8) {
      const int64_t n = std::min<int64_t>(8, tk - j0);
      // Each key's products in the 8 lanes of one sum, summed across lanes for 8 keys at
      // once. (The loop has 8 turns, a short block's missing keys summing nothing, so that
      // it unrolls and the sums stay in registers.)
      Floats8 lanes[8];
      for (int t = 0; t < 8; ++t) {
        Floats8 sum = {};
        if (t < n) {
          const int64_t j = j0 + t;
          const Cached* key = k + (rows ? rows[j] : row) * g.k_batch + j * g.k_row;
          for (int i = 0; i < D; i += 8) sum += load8(qr + i) * load8(key + i);
        }
        lanes[t] = sum;
      }
      const Floats8 sum = sums_of_8(lanes);
      // Padding, and a short block's lanes past tk, hidden.
      core::Ints8 shown;
      for (int t = 0; t < 8; ++t) shown[t] = t < n && !(padding && padding[j0 + t]) ? -1 : 0;
      core::store8(scores + r * stride + j0, shown ? g.scaling * sum : hidden);
    }
  }
  if (bias)
    for (int64_t r = 0; r < g.groups; ++r)
      for (int64_t j = 0; j < tk; ++j) scores[r * stride + j] += bias[r * g.bias_row + j];
  for (int64_t r = 0; r < g.groups; ++r) {
    float* s = scores + r * stride;
    Floats8 lane_max = hidden;
    for (int64_t j = 0; j < stride; j += 8) lane_max = core::max8(lane_max, load8(s + j));
    const float max = core::horizontal_max(lane_max);
    Floats8 context[D / 8];
    for (auto& c : context) c = Floats8{};
    if (max != kNegInf) {  // else nothing is visible: zero context
      Floats8 lane_sum = {};
      for (int64_t j = 0; j < stride; j += 8) {
        const Floats8 e = core::exp8_nonpositive(load8(s + j) - max);
        core::store8(s + j, e);
        lane_sum += e;
      }
      float total = 0;
      for (int l = 0; l < 8; ++l) total += lane_sum[l];
      const float inv = 1.0f / total;
      for (int64_t j = 0; j < tk; ++j) {
        const float p = s[j] * inv;
        const Cached* value = v + (rows ? rows[j] : row) * g.v_batch + j * g.v_row;
        for (int c = 0; c < D / 8; ++c) context[c] += p * load8(value + 8 * c);
      }
    }
    for (int c = 0; c < D / 8; ++c) core::store8(out + r * out_row + 8 * c, context[c]);
  }
}

// Heads of 64 with more than a few keys take the fixed-width path, the rest the general loop.
template <typename Cached>
[[gnu::always_inline]] inline void attend_pair_either(const DecodingGeometry& g, const float* q, const Cached* k,
                                                      const Cached* v, const int64_t* rows, int64_t row,
                                                      const bool* padding, const float* bias, float* scores,
                                                      float* out, int64_t out_row) {
  if (g.head_dim == 64 && g.tk > kFewestKeysForBlocks)
    attend_pair_fixed<64>(g, q, k, v, rows, row, padding, bias, scores, out, out_row);
  else
    attend_pair(g, q, k, v, rows, row, padding, bias, scores, out, out_row);
}

// The two instantiations, each built for AVX2 as well (helpers inline into the clones).
CSAN_WITH_AVX2_CLONE
void attend_pair_float(const DecodingGeometry& g, const float* q, const float* k, const float* v, const int64_t* rows,
                       int64_t row, const bool* padding, const float* bias, float* scores, float* out,
                       int64_t out_row) {
  attend_pair_either(g, q, k, v, rows, row, padding, bias, scores, out, out_row);
}
CSAN_WITH_AVX2_CLONE
void attend_pair_bf16(const DecodingGeometry& g, const float* q, const c10::BFloat16* k, const c10::BFloat16* v,
                      const int64_t* rows, int64_t row, const bool* padding, const float* bias, float* scores,
                      float* out, int64_t out_row) {
  attend_pair_either(g, q, k, v, rows, row, padding, bias, scores, out, out_row);
}

}  // namespace

torch::Tensor decoding_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                 const torch::Tensor& key_padding_mask, int64_t num_heads, double scaling,
                                 const torch::Tensor& rows_at, const torch::Tensor& bias) {
  const bool bf16_cache = k.scalar_type() == torch::kBFloat16;
  TORCH_CHECK(q.scalar_type() == torch::kFloat && (k.scalar_type() == torch::kFloat || bf16_cache) &&
                  v.scalar_type() == k.scalar_type() && q.device().is_cpu() && k.device().is_cpu() &&
                  v.device().is_cpu(),
              "decoding attention: a float32 query and float32 or bf16 keys and values, on the CPU");
  const bool history = rows_at.defined();
  TORCH_CHECK(q.dim() == 2 && k.dim() == 4 && k.sizes() == v.sizes() && k.size(1) == num_heads &&
                  q.size(1) == num_heads * k.size(3) && k.size(0) > 0 &&
                  (history ? rows_at.dim() == 2 && rows_at.size(0) == q.size(0) && rows_at.size(1) == k.size(2)
                           : q.size(0) % k.size(0) == 0),
              "decoding attention: bad shapes q ", q.sizes(), " k ", k.sizes(), " v ", v.sizes(),
              history ? " rows_at " : "", history ? rows_at.sizes() : torch::IntArrayRef{});
  TORCH_CHECK(!(history && key_padding_mask.defined()), "decoding attention: no padding mask with a beam history");
  const torch::Tensor qc = q.stride(1) == 1 ? q : q.contiguous();
  const torch::Tensor kc = k.stride(3) == 1 ? k : k.contiguous();
  const torch::Tensor vc = v.stride(3) == 1 ? v : v.contiguous();
  torch::Tensor padding, table;
  if (key_padding_mask.defined()) {
    TORCH_CHECK(key_padding_mask.sizes() == torch::IntArrayRef({k.size(0), k.size(2)}),
                "decoding attention: padding mask ", key_padding_mask.sizes(), " for keys ", k.sizes());
    padding = key_padding_mask.to(torch::kBool).contiguous();
  }
  if (history) {
    table = rows_at.to(torch::kLong).contiguous();
    const auto [low, high] = table.numel() > 0 ? torch::aminmax(table) : std::make_tuple(table, table);
    TORCH_CHECK(table.numel() == 0 || (low.item<int64_t>() >= 0 && high.item<int64_t>() < k.size(0)),
                "decoding attention: rows_at outside the ", k.size(0), " stored rows");
  }

  // With a history every query row is its own pair (G = 1) over the stored rows.
  const int64_t key_rows = history ? q.size(0) : k.size(0);
  DecodingGeometry g{q.size(0) / key_rows, num_heads,    k.size(3),    k.size(2),
                     qc.stride(0),         kc.stride(0), kc.stride(1), kc.stride(2),
                     vc.stride(0),         vc.stride(1), vc.stride(2), static_cast<float>(scaling)};
  const int64_t model_dim = q.size(1);
  torch::Tensor out = torch::empty({q.size(0), model_dim}, q.options());
  const float* qp = qc.data_ptr<float>();
  const float* kf = bf16_cache ? nullptr : kc.data_ptr<float>();
  const float* vf = bf16_cache ? nullptr : vc.data_ptr<float>();
  const c10::BFloat16* kb = bf16_cache ? kc.data_ptr<c10::BFloat16>() : nullptr;
  const c10::BFloat16* vb = bf16_cache ? vc.data_ptr<c10::BFloat16>() : nullptr;
  const bool* mask = padding.defined() ? padding.data_ptr<bool>() : nullptr;
  const int64_t* rows = history ? table.data_ptr<int64_t>() : nullptr;
  float* op = out.data_ptr<float>();
  torch::Tensor bias_rows;
  int64_t bias_head = 0;
  if (bias.defined()) {
    TORCH_CHECK(bias.dim() == 3 && (bias.size(0) == 1 || bias.size(0) == q.size(0)) &&
                    (bias.size(1) == 1 || bias.size(1) == num_heads) && bias.size(2) == k.size(2),
                "decoding attention: bias ", bias.sizes(), " for ", q.size(0), " rows, ", num_heads, " heads and ",
                k.size(2), " keys");
    bias_rows = bias.to(torch::kFloat).contiguous();
    g.bias_row = bias_rows.size(0) == 1 ? 0 : bias_rows.stride(0);
    bias_head = bias_rows.size(1) == 1 ? 0 : bias_rows.stride(1);
  }
  const float* bp = bias_rows.defined() ? bias_rows.data_ptr<float>() : nullptr;

  const int64_t pairs = key_rows * num_heads;
  const int64_t work_per_pair = std::max<int64_t>(1, g.groups * g.tk * g.head_dim);
  const int64_t grain = std::max<int64_t>(1, 32768 / work_per_pair);
  at::parallel_for(0, pairs, grain, [&](int64_t begin, int64_t end) {
    std::vector<float> scores(g.groups * padded_to_8(g.tk));  // attend_pair_fixed's rows: padded
    for (int64_t pair = begin; pair < end; ++pair) {
      const int64_t row = pair / num_heads, h = pair % num_heads;
      const float* pair_q = qp + row * g.groups * g.q_row + h * g.head_dim;
      const int64_t* pair_rows = rows ? rows + row * g.tk : nullptr;
      const bool* pair_mask = mask ? mask + row * g.tk : nullptr;
      const float* pair_bias = bp ? bp + row * g.groups * g.bias_row + h * bias_head : nullptr;
      float* pair_out = op + row * g.groups * model_dim + h * g.head_dim;
      if (bf16_cache)
        attend_pair_bf16(g, pair_q, kb + h * g.k_head, vb + h * g.v_head, pair_rows, row, pair_mask, pair_bias,
                         scores.data(), pair_out, model_dim);
      else
        attend_pair_float(g, pair_q, kf + h * g.k_head, vf + h * g.v_head, pair_rows, row, pair_mask, pair_bias,
                          scores.data(), pair_out, model_dim);
    }
  });
  return out;
}

}  // namespace csan::nn
