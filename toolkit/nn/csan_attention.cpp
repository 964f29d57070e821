#include "toolkit/nn/csan_attention.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <optional>
#include <vector>

#include "toolkit/core/error.h"
#include "toolkit/nn/hidden_score.h"

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
    case HeadBoundary::Truncate:
      return "truncate";
    case HeadBoundary::Wrap:
      return "wrap";
    case HeadBoundary::Authors:
      return "authors";
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

// The computation runs in the layout [B, nb, H, rows, cols]: batch, query block, head.
// A dense call is one block, so its tensors are [B, 1, H, Tq, Tk] views.

// [B, X, Tk, d] -> [B, nb, X, S, d]: the keys each block of queries may reach (a view,
// after a zero-padded copy when the blocks run past the ends).
torch::Tensor key_blocks(const torch::Tensor& x, const Blocks& b) {
  if (b.count == 1 && !b.pad_left && !b.pad_right) return x.unsqueeze(1);
  torch::Tensor padded = b.pad_left || b.pad_right ? F::pad(x, F::PadFuncOptions({0, 0, b.pad_left, b.pad_right})) : x;
  return padded.unfold(2, b.keys, b.queries).permute({0, 2, 1, 4, 3});
}

// [B, H, Tq, d] -> [B, nb, H, W, d].
torch::Tensor query_blocks(const torch::Tensor& q, const Blocks& b) {
  const int64_t missing = b.count * b.queries - q.size(2);
  if (b.count == 1 && !missing) return q.unsqueeze(1);
  torch::Tensor padded = missing ? F::pad(q, F::PadFuncOptions({0, 0, 0, missing})) : q;
  return padded.view({q.size(0), q.size(1), b.count, b.queries, q.size(3)}).transpose(1, 2);
}

// The 2-D area's keys (or values) of every head side by side, [B, nb, H, (N+1) S, d],
// in ONE gather from the blocks view: slot o of head h holds head heads[h][o]. The
// result is contiguous, so the matmuls read it without another copy.
torch::Tensor area_blocks(const torch::Tensor& blocks, const torch::Tensor& heads_flat, int64_t heads, int64_t area) {
  torch::Tensor gathered = blocks.index_select(2, heads_flat);  // [B, nb, H (N+1), S, d]
  return gathered.view({blocks.size(0), blocks.size(1), heads, area * blocks.size(3), blocks.size(4)});
}

struct Geometry {
  Blocks b;
  int64_t shift = 0, left = 0, right = 0, area = 1, heads = 1;
};

// The additive bias of the scores: 0 where query row r of a block may see key slot s of
// area slot o, -inf elsewhere; [B or 1, nb, H or 1, W, (N+1) S] in the scores' dtype.
// Adding it (rather than masked_fill) costs nothing in the backward pass: the gradient
// of an addition of a constant passes through untouched.
torch::Tensor window_bias(const torch::Tensor& usable, const Geometry& g, const HeadArea* table,
                          torch::ScalarType dtype) {
  const Blocks& b = g.b;
  auto opts = torch::TensorOptions().dtype(torch::kLong).device(usable.device());
  // key index - query position, for row r and slot s: s - pad_left - r - shift.
  torch::Tensor distance = torch::arange(b.keys, opts).view({1, b.keys}) -
                           torch::arange(b.queries, opts).view({b.queries, 1}) - (b.pad_left + g.shift);
  torch::Tensor in_window = distance.ge(-g.left).logical_and_(distance.le(g.right));  // [W, S]
  torch::Tensor own_position = distance.eq(0);
  torch::Tensor padded = F::pad(usable, F::PadFuncOptions({b.pad_left, b.pad_right}));              // false outside
  torch::Tensor reachable = padded.unfold(1, b.keys, b.queries);                                    // [Bm, nb, S]
  torch::Tensor visible = reachable.unsqueeze(2).logical_and(in_window).logical_or_(own_position);  // [Bm, nb, W, S]
  visible = visible.unsqueeze(2).unsqueeze(4);  // [Bm, nb, 1, W, 1, S]
  if (table && !table->all_exist)               // truncated edge heads: missing slots hidden
    visible = visible.logical_and(table->exists.to(usable.device()).view({1, 1, g.heads, 1, g.area, 1}));
  else
    visible = visible.expand({-1, -1, -1, -1, g.area, -1});
  visible = visible.reshape({visible.size(0), b.count, visible.size(2), b.queries, g.area * b.keys});
  return torch::zeros(visible.sizes(), usable.options().dtype(dtype))
      .masked_fill_(visible.logical_not(), -std::numeric_limits<double>::infinity());
}

int64_t device_code(const torch::Device& d) { return static_cast<int64_t>(d.type()) * 1000 + d.index(); }

}  // namespace

int64_t automatic_banded_from_length(const CsanWindow& window) {
  return (window.head_window == 1 ? 16 : 9) * window.window;
}

torch::Tensor csan_attention(const torch::Tensor& q, const torch::Tensor& k_all, const torch::Tensor& v_all,
                             const CsanWindow& window, const CsanCall& call) {
  if (window.window < 1 || window.window % 2 == 0)
    throw Error("CSAN window must be odd (M+1 positions centred on the query), got " + std::to_string(window.window));
  const int64_t batch = q.size(0), heads = q.size(1), tq = q.size(2);
  Geometry g;
  g.left = window.window / 2, g.right = call.causal ? 0 : window.window / 2;
  g.area = window.head_window, g.heads = heads;

  // Only keys some query can reach: an incremental decoding step costs O(M), not O(t).
  const int64_t first = std::max<int64_t>(0, call.query_offset - g.left);
  const int64_t last = std::min<int64_t>(k_all.size(2), call.query_offset + tq + g.right);
  const int64_t tk = last - first;
  g.shift = call.query_offset - first;
  torch::Tensor k = k_all.narrow(2, first, tk), v = v_all.narrow(2, first, tk);

  const int64_t banded_from =
      call.banded_from_length > 0 ? call.banded_from_length : automatic_banded_from_length(window);
  const bool banded = !call.extra_bias.defined() &&
                      (call.path == CsanPath::Banded || (call.path == CsanPath::Auto && tk >= banded_from));
  g.b = banded ? banded_blocks(tq, tk, g.shift, g.left, g.right) : dense_blocks(tq, tk);
  const Blocks& b = g.b;
  const auto device = q.device();

  auto cached = [&](std::vector<int64_t> key, const torch::Tensor& padding, const std::function<torch::Tensor()>& f) {
    if (!call.masks) return f();
    key.push_back(device_code(device));
    return call.masks->get(key, padding, first, tk, f);
  };
  std::optional<HeadArea> table;
  if (g.area > 1) table = head_area(heads, g.area, window.head_boundary);

  // Scores [B, nb, H, W, (N+1) S] of each block's queries against the keys it reaches.
  torch::Tensor keys = key_blocks(k, b), values = key_blocks(v, b);
  if (g.area > 1) {
    auto indices = [&](int which) {
      return cached({1, which, heads, g.area, static_cast<int64_t>(window.head_boundary)}, {},
                    [&] { return (which == 0 ? table->key_heads : table->value_heads).flatten().to(device); });
    };
    keys = area_blocks(keys, indices(0), heads, g.area);
    values = area_blocks(values, indices(1), heads, g.area);
  }
  torch::Tensor scores = torch::matmul(query_blocks(q, b), keys.transpose(-2, -1));

  const bool per_head = table && !table->all_exist;
  torch::Tensor bias =
      cached({0, tq, tk, g.shift, g.left, g.right, b.count, b.queries, b.keys, b.pad_left, g.area, per_head ? heads : 0,
              per_head ? static_cast<int64_t>(window.head_boundary) : -1, static_cast<int64_t>(scores.scalar_type())},
             call.key_padding_mask, [&] {
               torch::Tensor usable = call.key_padding_mask.defined()
                                          ? call.key_padding_mask.narrow(1, first, tk).logical_not()
                                          : torch::ones({1, tk}, torch::dtype(torch::kBool).device(device));
               return window_bias(usable, g, per_head ? &*table : nullptr, scores.scalar_type());
             });
  scores = scores + bias;
  if (call.extra_bias.defined()) {  // dense: [B, 1, H, Tq, (N+1) Tk], slot-major columns
    const torch::Tensor extra = bias_as(call.extra_bias.narrow(3, first, tk).unsqueeze(1), scores.scalar_type());
    scores = scores + (g.area > 1 ? extra.repeat({1, 1, 1, 1, g.area}) : extra);
  }

  torch::Tensor probs = scores.scalar_type() == torch::kFloat
                            ? torch::softmax(scores, -1)
                            : torch::softmax(scores, -1, torch::kFloat).to(scores.scalar_type());
  if (call.dropout > 0) probs = torch::dropout(probs, call.dropout, true);
  torch::Tensor out = torch::matmul(probs, values);  // [B, nb, H, W, d]
  out = b.count == 1 ? out.squeeze(1) : out.transpose(1, 2).reshape({batch, heads, b.count * b.queries, q.size(3)});
  return b.count * b.queries == tq ? out : out.narrow(2, 0, tq);
}

}  // namespace csan::nn
