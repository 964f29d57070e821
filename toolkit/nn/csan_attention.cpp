#include "toolkit/nn/csan_attention.h"

#include <algorithm>
#include <limits>

#include "toolkit/core/error.h"

namespace csan::nn {

namespace F = torch::nn::functional;

HeadBoundary parse_head_boundary(const std::string& name) {
  if (name == "truncate") return HeadBoundary::Truncate;
  if (name == "wrap") return HeadBoundary::Wrap;
  if (name == "authors") return HeadBoundary::Authors;
  throw Error("unknown head boundary '" + name + "'; known: truncate, wrap, authors");
}

std::string head_boundary_name(HeadBoundary boundary) {
  switch (boundary) {
    case HeadBoundary::Truncate: return "truncate";
    case HeadBoundary::Wrap: return "wrap";
    case HeadBoundary::Authors: return "authors";
  }
  return "?";
}

HeadArea head_area(int64_t heads, int64_t head_window, HeadBoundary boundary) {
  if (head_window < 1 || head_window % 2 == 0)
    throw Error("CSAN head window must be odd (N+1 heads centred on the query's head), got " +
                std::to_string(head_window));
  if (boundary != HeadBoundary::Truncate && head_window > heads)
    throw Error("CSAN head window " + std::to_string(head_window) + " exceeds the " + std::to_string(heads) +
                " heads: with head_boundary " + head_boundary_name(boundary) + " a head would appear twice");
  HeadArea area;
  area.key_heads = torch::empty({heads, head_window}, torch::kLong);
  area.value_heads = torch::empty({heads, head_window}, torch::kLong);
  area.exists = torch::empty({heads, head_window}, torch::kBool);
  auto keys = area.key_heads.accessor<int64_t, 2>();
  auto values = area.value_heads.accessor<int64_t, 2>();
  auto exists = area.exists.accessor<bool, 2>();
  for (int64_t h = 0; h < heads; ++h) {
    for (int64_t o = 0; o < head_window; ++o) {
      const int64_t neighbour = h - head_window / 2 + o;
      const int64_t wrapped = ((neighbour % heads) + heads) % heads;
      const int64_t clamped = std::clamp<int64_t>(neighbour, 0, heads - 1);
      const bool inside = neighbour == clamped;
      keys[h][o] = boundary == HeadBoundary::Truncate ? clamped : wrapped;
      values[h][o] = boundary == HeadBoundary::Wrap ? wrapped : clamped;
      exists[h][o] = inside || boundary != HeadBoundary::Truncate;
      area.all_exist = area.all_exist && exists[h][o];
    }
  }
  return area;
}

namespace {

// How queries are grouped against keys. Query r of block n sits at kept-key index
// n*W + r + shift; key slot s of block n is kept-key index n*W + s - pad_left.
struct Blocks {
  int64_t count = 1;     // nb
  int64_t queries = 0;   // W
  int64_t keys = 0;      // S
  int64_t pad_left = 0;  // zero keys before the first kept key
  int64_t pad_right = 0;
};

Blocks dense_blocks(int64_t tq, int64_t tk) { return {1, tq, tk, 0, 0}; }

Blocks banded_blocks(int64_t tq, int64_t tk, int64_t shift, int64_t left, int64_t right) {
  Blocks b;
  // Blocks about twice the window keep the wasted corner of each block near a third
  // while the per-block matmuls stay large enough to run at BLAS speed.
  b.queries = std::max<int64_t>(16, 2 * (left + right));
  b.count = (tq + b.queries - 1) / b.queries;
  b.keys = b.queries + left + right;
  b.pad_left = left - shift;
  b.pad_right = (b.count - 1) * b.queries + b.keys - b.pad_left - tk;
  return b;
}

// [B, X, T, d] -> [B, X, nb, d, S]: the keys each block of queries may reach.
torch::Tensor key_blocks(const torch::Tensor& x, const Blocks& b) {
  torch::Tensor padded = b.pad_left || b.pad_right ? F::pad(x, F::PadFuncOptions({0, 0, b.pad_left, b.pad_right}))
                                                   : x;
  return padded.unfold(2, b.keys, b.queries);
}

// [B, Tk] usable keys -> the hidden slots [B, 1, nb, W, 1, S] of each block.
torch::Tensor hidden_slots(const torch::Tensor& usable, const Blocks& b, int64_t shift, int64_t left,
                           int64_t right) {
  auto opts = torch::TensorOptions().dtype(torch::kLong).device(usable.device());
  // key index - query position, for row r and slot s: s - pad_left - r - shift.
  torch::Tensor distance = torch::arange(b.keys, opts).view({1, b.keys}) -
                           torch::arange(b.queries, opts).view({b.queries, 1}) - (b.pad_left + shift);
  torch::Tensor in_window = distance.ge(-left).logical_and_(distance.le(right));  // [W, S]
  torch::Tensor own_position = distance.eq(0);
  torch::Tensor padded = F::pad(usable, F::PadFuncOptions({b.pad_left, b.pad_right}));  // false outside
  torch::Tensor reachable = padded.unfold(1, b.keys, b.queries);                        // [B, nb, S]
  torch::Tensor visible = reachable.unsqueeze(2).logical_and(in_window).logical_or_(own_position);
  return visible.logical_not_().view({usable.size(0), 1, b.count, b.queries, 1, b.keys});
}

}  // namespace

torch::Tensor csan_attention(const torch::Tensor& q, const torch::Tensor& k_all, const torch::Tensor& v_all,
                             const CsanWindow& window, const CsanCall& call) {
  if (window.window < 1 || window.window % 2 == 0)
    throw Error("CSAN window must be odd (M+1 positions centred on the query), got " +
                std::to_string(window.window));
  const int64_t batch = q.size(0), heads = q.size(1), tq = q.size(2), dim = q.size(3);
  const int64_t left = window.window / 2, right = call.causal ? 0 : window.window / 2;

  // Only keys some query can reach: an incremental decoding step costs O(M), not O(t).
  const int64_t first = std::max<int64_t>(0, call.query_offset - left);
  const int64_t last = std::min<int64_t>(k_all.size(2), call.query_offset + tq + right);
  const int64_t tk = last - first, shift = call.query_offset - first;
  torch::Tensor k = k_all.narrow(2, first, tk), v = v_all.narrow(2, first, tk);
  torch::Tensor usable = call.key_padding_mask.defined()
                             ? call.key_padding_mask.narrow(1, first, tk).logical_not()
                             : torch::ones({batch, tk}, torch::dtype(torch::kBool).device(q.device()));

  const bool banded = call.path == CsanPath::Banded || (call.path == CsanPath::Auto && tk >= call.banded_from_length);
  const Blocks b = banded ? banded_blocks(tq, tk, shift, left, right) : dense_blocks(tq, tk);

  // The area's heads side by side: [B, H, N+1, Tk, d] (1-D: no copy).
  const int64_t area = window.head_window;
  torch::Tensor hidden = hidden_slots(usable, b, shift, left, right);  // [B, 1, nb, W, 1, S]
  torch::Tensor k_area, v_area;
  if (area == 1) {
    k_area = k.unsqueeze(2), v_area = v.unsqueeze(2);
  } else {
    HeadArea table = head_area(heads, area, window.head_boundary);
    auto device = q.device();
    k_area = k.index_select(1, table.key_heads.flatten().to(device)).view({batch, heads, area, tk, dim});
    v_area = v.index_select(1, table.value_heads.flatten().to(device)).view({batch, heads, area, tk, dim});
    hidden = hidden.expand({batch, 1, b.count, b.queries, area, b.keys});
    if (!table.all_exist)
      hidden = hidden.logical_or(table.exists.logical_not().to(device).view({1, heads, 1, 1, area, 1}));
  }
  hidden = hidden.reshape({batch, hidden.size(1), b.count, b.queries, area * b.keys});

  // Keys: [B, H, N+1, nb, d, S] -> [B, H, nb, d, (N+1) S]; values: [B, H, nb, (N+1) S, d].
  torch::Tensor keys = key_blocks(k_area.flatten(1, 2), b)
                           .view({batch, heads, area, b.count, dim, b.keys})
                           .permute({0, 1, 3, 4, 2, 5})
                           .reshape({batch, heads, b.count, dim, area * b.keys});
  torch::Tensor values = key_blocks(v_area.flatten(1, 2), b)
                             .view({batch, heads, area, b.count, dim, b.keys})
                             .permute({0, 1, 3, 2, 5, 4})
                             .reshape({batch, heads, b.count, area * b.keys, dim});
  const int64_t padded_queries = b.count * b.queries;
  torch::Tensor queries = padded_queries == tq ? q : F::pad(q, F::PadFuncOptions({0, 0, 0, padded_queries - tq}));
  queries = queries.reshape({batch, heads, b.count, b.queries, dim});

  torch::Tensor scores = torch::matmul(queries, keys);  // [B, H, nb, W, (N+1) S]
  scores.masked_fill_(hidden, -std::numeric_limits<double>::infinity());
  torch::Tensor probs = scores.scalar_type() == torch::kFloat
                            ? torch::softmax(scores, -1)
                            : torch::softmax(scores, -1, torch::kFloat).to(scores.scalar_type());
  if (call.dropout > 0) probs = torch::dropout(probs, call.dropout, true);
  torch::Tensor out = torch::matmul(probs, values).view({batch, heads, padded_queries, dim});
  return padded_queries == tq ? out : out.narrow(2, 0, tq);
}

}  // namespace csan::nn
