// Full-scope attention of one new query position per row against cached keys and
// values: the inner step of incremental decoding. The general path runs QK^T and PV as
// batched matmuls that LibTorch (without MKL) loops over one tiny GEMM per (row, head),
// each with its own dispatch, views and BLAS call; at beam 5 and 64 sentences that is
// thousands of calls per layer and step for a few MFLOP of work. Here each (key row,
// head) pair is one pass of dot products, an in-cache softmax and a weighted sum over
// the cached rows, with the pairs spread over the intra-op threads. The G query rows
// that share one key row (the beams of a sentence against its encoder output) read
// each cached key and value once.
// Inference only (no autograd), CPU tensors: a float32 query, float32 or bf16 keys and
// values (compact caches, see IncrementalState).
#pragma once

#include <torch/torch.h>

#include <cstdint>

namespace csan::nn {

// q [R, H*d] (unit last stride, any row stride), k and v [Rk, H, Tk, d] (one type; unit last
// stride, e.g. views into preallocated caches), R = Rk * G: query rows r*G .. r*G+G-1
// attend to key row r. key_padding_mask [Rk, Tk] bool (true at padding) or undefined.
// Returns the context [R, H*d]: softmax(scaling * q k^T + mask) v per head; a row with
// no visible key gets a zero context.
// With rows_at [R, Tk] (a beam history, see IncrementalState::History), k and v are the
// stored rows instead and query row r reads position j from stored row rows_at[r][j]
// (G = 1, no padding mask).
// bias: [R or 1, H or 1, Tk] float added to the scaled scores of query row r (an
// attention-chain entry's bias; -inf hides a key), or undefined.
torch::Tensor decoding_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                 const torch::Tensor& key_padding_mask, int64_t num_heads, double scaling,
                                 const torch::Tensor& rows_at = {}, const torch::Tensor& bias = {});

}  // namespace csan::nn
