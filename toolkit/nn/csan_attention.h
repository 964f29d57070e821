// Convolutional self-attention (Yang et al., NAACL 2019) on projected heads: each query
// attends jointly, with one softmax, over the keys/values of a window of M+1 positions
// centred on it (eq. 4-6) in N+1 heads centred on its own head (eq. 7-9; N = 0 is 1-D
// CSAN). Parameter-free: it only decides which keys a query sees.
//
// Visibility of key position j in area slot o for query i of head h:
//   head slot o exists (see HeadBoundary)  and  i - M/2 <= j <= i + M/2 (causal: j <= i)
//   and  j is a real (non-padding) key of the sentence.
// A padding query (whose output nobody reads) additionally sees its own position, so
// that no softmax row is empty and nothing turns into NaN.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <string>

#include "toolkit/nn/csan_mask_cache.h"

namespace csan::nn {

// What the area does at the first and last heads, where h - N/2 or h + N/2 falls outside
// 0..H-1 (the paper is silent).
enum class HeadBoundary {
  Truncate,  // edge heads see fewer heads (the out-of-range slots are dropped)
  Wrap,      // heads are a ring: head 0's left neighbour is head H-1, for keys and values
  // The first author's public code (Context-Aware-SAN, layers/attention_conv.py): keys
  // wrap around but values are clamped to the edge head, so at the edge heads a query
  // pairs the other edge's keys with its own head's values. For replication studies.
  Authors,
};
HeadBoundary parse_head_boundary(const std::string& name);  // truncate | wrap | authors
std::string head_boundary_name(HeadBoundary boundary);

struct CsanWindow {
  int64_t window = 11;      // M + 1 positions centred on the query (odd)
  int64_t head_window = 1;  // N + 1 heads centred on the query's head (odd); 1: 1-D CSAN
  HeadBoundary head_boundary = HeadBoundary::Truncate;
};

// For each query head h and area slot o (head h - N/2 + o): the head whose keys and the
// head whose values fill the slot, and whether the slot exists.
struct HeadArea {
  torch::Tensor key_heads;    // [H, N+1] int64
  torch::Tensor value_heads;  // [H, N+1] int64
  torch::Tensor exists;       // [H, N+1] bool
  bool all_exist = true;
};
// Throws csan::Error when N+1 > H for wrap/authors (a head would appear twice).
HeadArea head_area(int64_t heads, int64_t head_window, HeadBoundary boundary);

// Dense: one [Tq, (N+1) Tk] score block per head, masked to the window; cost O(I^2).
// Banded: blocks of queries against only the keys their windows reach; cost O(I*M).
// Auto: banded once the keys a query could see reach banded_from_length, or, when that
// is 0, the measured crossover (automatic_banded_from_length).
enum class CsanPath { Auto, Dense, Banded };

struct CsanCall {
  torch::Tensor key_padding_mask;  // [B, Tk] bool, true at padding; undefined: none
  int64_t query_offset = 0;        // absolute position of query 0 among the keys
  bool causal = false;             // keys after the query are hidden (left-only window)
  double dropout = 0.0;            // on the attention weights (0: none)
  CsanPath path = CsanPath::Auto;
  int64_t banded_from_length = 0;  // 0: automatic_banded_from_length(window)
  // Where window biases and head tables built for earlier calls with the same lengths
  // and padding are reused (the windowed layers of one forward); null: built each call.
  CsanMaskCache* masks = nullptr;
  // Other attention entries' bias, [B or 1, H or 1, Tq, Tk] over all keys, added to the
  // scores of every area slot (a key's bias is the query head's, whichever head the slot
  // reads). It forces the dense path. Undefined: none.
  torch::Tensor extra_bias;
};

// Where the banded path overtakes the dense one, from bench-csan --attention (8 heads x
// 64, 4096 tokens per batch, 1 thread, forward + backward, window 11, lengths 16-256 in
// one run): 1-D dense ~ banded near 176 keys, 2-D near 96 (its dense scores are (N+1)
// times wider, so banding pays off sooner). Dense costs grow with T and banded with M,
// so the crossover is kept proportional to the window: 16 windows for 1-D, 9 for 2-D.
int64_t automatic_banded_from_length(const CsanWindow& window);

// q [B, H, Tq, d] (already scaled), k/v [B, H, Tk, d] -> per-head context [B, H, Tq, d].
torch::Tensor csan_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                             const CsanWindow& window, const CsanCall& call);

}  // namespace csan::nn
