#include "toolkit/generation/vocab_kernels.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "toolkit/core/float_vectors.h"
#include "toolkit/core/vector_clones.h"

namespace csan::generation {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
constexpr int64_t kLanes = 16;

// GCC's vector extensions (core/float_vectors.h): its vectorizer leaves these loops scalar
// (IEEE max is no associative reduction; the clamps of exp become branches).
using core::broadcast8;
using core::exp8_nonpositive;
using core::exp_nonpositive;
using core::Floats16;
using core::Floats8;
using core::horizontal_max;
using core::Ints16;
using core::Ints8;
using core::load8;
using core::max8;

// True when some lane of a 16-float block exceeds t (NaN never does).
inline bool any_above(const float* x, float t) {
  const Floats8 threshold = broadcast8(t);
  const Ints8 above = (load8(x) > threshold) | (load8(x + 8) > threshold);
  uint64_t words[4];
  std::memcpy(words, &above, sizeof words);
  return (words[0] | words[1] | words[2] | words[3]) != 0;
}

// A 16-float block at once (one AVX-512 register where the clone has them), summed into 8
// lanes exactly as two 8-float halves were: low half + high half, then into the sum.
inline Floats8 exp16_nonpositive_folded(const float* x, Floats16 shift) {
  Floats16 v;
  std::memcpy(&v, x, sizeof v);
  const Floats16 e = exp_nonpositive<Floats16, Ints16>(v - shift);
  return __builtin_shufflevector(e, e, 0, 1, 2, 3, 4, 5, 6, 7) +
         __builtin_shufflevector(e, e, 8, 9, 10, 11, 12, 13, 14, 15);
}

CSAN_WITH_AVX512_AND_AVX2_CLONES
float logsumexp_row(const float* x, int64_t n) {
  Floats8 lane_max = broadcast8(kNegInf);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) lane_max = max8(max8(lane_max, load8(x + i)), load8(x + i + 8));
  float max = horizontal_max(lane_max);
  for (int64_t j = i; j < n; ++j) max = std::max(max, x[j]);
  if (!std::isfinite(max)) return max;  // all -inf, or an inf
  const Floats16 shift = Floats16{} + max;
  Floats8 lane_sum = broadcast8(0.0f);
  for (i = 0; i + kLanes <= n; i += kLanes) lane_sum += exp16_nonpositive_folded(x + i, shift);
  float lanes[8];
  std::memcpy(lanes, &lane_sum, sizeof lanes);
  float sum = 0;
  for (float lane : lanes) sum += lane;
  for (; i < n; ++i) {  // the tail, one value broadcast at a time
    const Floats8 e = exp8_nonpositive(broadcast8(x[i] - max));
    float first;
    std::memcpy(&first, &e, sizeof first);
    sum += first;
  }
  return max + std::log(sum);  // NaN in, NaN out (through the sum)
}

// The `width` largest finite values of a row, largest first (equal values in order of
// appearance). Blocks whose largest value cannot enter are skipped after one vector max.
struct RowTop {
  std::vector<float> value;
  std::vector<int64_t> index;
  int64_t count = 0;

  explicit RowTop(int64_t width) : value(width), index(width) {}
  float threshold() const { return count < static_cast<int64_t>(value.size()) ? kNegInf : value[count - 1]; }
  void offer(float x, int64_t i) {
    if (!(x > threshold())) return;
    const auto width = static_cast<int64_t>(value.size());
    int64_t p = std::min(count, width - 1);
    while (p > 0 && value[p - 1] < x) {
      value[p] = value[p - 1], index[p] = index[p - 1];
      --p;
    }
    value[p] = x, index[p] = i;
    count = std::min(count + 1, width);
  }
};

CSAN_WITH_AVX2_CLONE
void scan_row(const float* x, int64_t n, RowTop& top) {
  top.count = 0;
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    if (!any_above(x + i, top.threshold())) continue;
    for (int64_t l = 0; l < kLanes; ++l) top.offer(x[i + l], i + l);
  }
  for (; i < n; ++i) top.offer(x[i], i);
}

struct Candidate {
  float score, lprob;
  int64_t beam, token;
};

}  // namespace

torch::Tensor row_logsumexp(const torch::Tensor& x) {
  TORCH_CHECK(x.dim() == 2, "row_logsumexp: [R, V] expected, got ", x.sizes());
  if (x.scalar_type() != torch::kFloat || !x.device().is_cpu()) return torch::logsumexp(x.to(torch::kFloat), 1);
  const torch::Tensor rows = x.contiguous();
  const int64_t r = rows.size(0), v = rows.size(1);
  torch::Tensor out = torch::empty({r}, rows.options());
  const float* in = rows.data_ptr<float>();
  float* o = out.data_ptr<float>();
  at::parallel_for(0, r, std::max<int64_t>(1, 65536 / std::max<int64_t>(v, 1)), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) o[i] = logsumexp_row(in + i * v, v);
  });
  return out;
}

Candidates best_extensions_reference(const torch::Tensor& scores, const torch::Tensor& normalizer,
                                     const torch::Tensor& cumulative, int64_t width, bool first_step) {
  const int64_t n = scores.size(0), v = scores.size(2);
  const torch::Tensor lprobs = scores - normalizer.unsqueeze(2);
  const torch::Tensor total = first_step ? lprobs.narrow(1, 0, 1) : lprobs + cumulative.unsqueeze(2);
  const int64_t span = total.size(1) * v;
  auto [top, index] = torch::topk(total.reshape({n, span}), std::min(width, span));
  return {top, index.remainder(v), index.div(v, "floor"), lprobs.reshape({n, -1}).gather(1, index)};
}

Candidates best_extensions(const torch::Tensor& scores, const torch::Tensor& normalizer,
                           const torch::Tensor& cumulative, int64_t width, bool first_step) {
  TORCH_CHECK(scores.dim() == 3 && normalizer.sizes() == scores.sizes().slice(0, 2) &&
                  cumulative.sizes() == normalizer.sizes() && width > 0,
              "best_extensions: scores ", scores.sizes(), ", normalizer ", normalizer.sizes(), ", cumulative ",
              cumulative.sizes());
  const bool fused = scores.scalar_type() == torch::kFloat && normalizer.scalar_type() == torch::kFloat &&
                     cumulative.scalar_type() == torch::kFloat && scores.device().is_cpu();
  if (!fused) return best_extensions_reference(scores, normalizer, cumulative, width, first_step);

  const int64_t n = scores.size(0), k = scores.size(1), v = scores.size(2);
  const int64_t beams = first_step ? 1 : k;
  const int64_t out_width = std::min(width, beams * v);
  const torch::Tensor s = scores.contiguous(), norm = normalizer.contiguous(), cum = cumulative.contiguous();
  torch::Tensor top = torch::empty({n, out_width}, s.options());
  torch::Tensor lprobs = torch::empty({n, out_width}, s.options());
  torch::Tensor tokens = torch::empty({n, out_width}, torch::kLong);
  torch::Tensor beam_of = torch::empty({n, out_width}, torch::kLong);
  const float* sp = s.data_ptr<float>();
  const float* np = norm.data_ptr<float>();
  const float* cp = cum.data_ptr<float>();
  float* tp = top.data_ptr<float>();
  float* lp = lprobs.data_ptr<float>();
  int64_t* kp = tokens.data_ptr<int64_t>();
  int64_t* bp = beam_of.data_ptr<int64_t>();

  at::parallel_for(0, n, 1, [&](int64_t begin, int64_t end) {
    RowTop row_top(out_width);
    std::vector<Candidate> candidates;
    for (int64_t i = begin; i < end; ++i) {
      candidates.clear();
      for (int64_t b = 0; b < beams; ++b) {
        const int64_t row = i * k + b;
        const float base = first_step ? 0.0f : cp[row];
        if (base == kNegInf) continue;  // a dead beam extends to nothing
        scan_row(sp + row * v, v, row_top);
        for (int64_t c = 0; c < row_top.count; ++c) {
          const float lprob = row_top.value[c] - np[row];
          candidates.push_back({base + lprob, lprob, b, row_top.index[c]});
        }
      }
      // Within a beam the candidates are already best first; stable keeps beam order on ties.
      std::stable_sort(candidates.begin(), candidates.end(),
                       [](const Candidate& a, const Candidate& b) { return a.score > b.score; });
      for (int64_t c = 0; c < out_width; ++c) {
        const int64_t at = i * out_width + c;
        const bool real = c < static_cast<int64_t>(candidates.size());
        tp[at] = real ? candidates[c].score : kNegInf;
        lp[at] = real ? candidates[c].lprob : kNegInf;
        kp[at] = real ? candidates[c].token : 0;
        bp[at] = real ? candidates[c].beam : 0;
      }
    }
  });
  return {top, tokens, beam_of, lprobs};
}

}  // namespace csan::generation
