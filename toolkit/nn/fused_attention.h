// Full-scope multi-head attention in one autograd node, for training and scoring
// (no incremental state). The unfused path splits Q, K and V into heads with three
// transposed copies, scales Q in another pass, runs QK^T and PV as batched GEMMs that
// LibTorch (without MKL) loops over serially on one core, masks, softmaxes into a new
// buffer, and copies the heads back: about ten passes over activations per call.
// Here each (sentence, head) is a GEMM on strided views of the projections (no head
// copies), the scale rides in the GEMM's alpha, masking and softmax happen in the
// score block while it is in cache, PV is written straight into the [B, T, D] output,
// and (sentence, head) pairs are spread over the intra-op threads.
// An additive bias (an attention-chain entry's: a window, relative positions, a learned
// matrix) is added to each score block in the same pass, with its gradient when it
// requires one. Float32 CPU tensors only; callers use the general path otherwise (see
// available()).
#pragma once

#include <torch/torch.h>

#include <cstdint>

namespace csan::nn {

// True when the fused kernel can run here (BLAS found in the process).
bool fused_attention_available();

// q [B, Tq, H*d], k and v [B, Tk, H*d] (any strides with unit last stride, e.g. slices
// of a fused QKV projection) -> context [B, Tq, H*d]: softmax(scaling * q k^T + mask) v
// per head. key_padding_mask [B, Tk] bool (true at padding) or undefined; causal: query
// i sees keys up to Tk - Tq + i. bias: [B or 1, H or 1, Tq, Tk] float, added after the
// scaling (-inf hides a key), or undefined. A query with no visible key gets a zero context.
torch::Tensor fused_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                              const torch::Tensor& key_padding_mask, bool causal, int64_t num_heads, double scaling,
                              const torch::Tensor& bias = {});

}  // namespace csan::nn
