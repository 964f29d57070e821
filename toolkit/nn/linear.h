// y = x W^T + b for a float W, the product of csan's projections (nn::Projection: Dense,
// the attention input projections, the output projection) until a model is converted for
// inference. It is at::linear except in inference: there products go to oneDNN's sgemm
// where the process has it (onednn_sgemm.h), and otherwise a few rows of x go to a kernel
// of our own.
//
// Why: OpenBLAS copies ("packs") all of W before every product, whatever the number of
// rows. In the tail of a beam-search batch only a few sentences are left: on the
// bench-generate setup 261 of 576 decoding steps had at most 20 rows (4 sentences) and
// took 17% of the time, packing 19 MB of weights per step to multiply them with a handful
// of rows. few_rows_linear reads each weight row once, straight from where it lies, and
// multiplies it with every row of x while it is in L1: 1.1-6x faster than OpenBLAS for
// 1-15 rows on one thread, far more on two (OpenBLAS wakes its threads for any size).
// Measured: the tail steps of the bench-generate setup 15% faster (they are then bound
// by reading the weights from L3); one sentence at a time on 2 threads (--batch-size 1)
// 1.16x sentences/s. oneDNN's sgemm has small-row kernels that pack nothing either and
// are faster on most of a decoder's shapes (up to 1.4x this kernel on one thread, slower
// only for 2048 -> 512 at 16 rows), and decoding one sentence at a time with them is
// 1.24-1.43x faster: where it is present, this kernel is not used
// (tools/experiments/results/ctranslate2-cpu-2026-11-29.md, "Few rows on oneDNN too").
#pragma once

#include <torch/torch.h>

#include <cstdint>

namespace csan::nn {

// Without oneDNN, at most this many rows of x go to few_rows_linear: on one thread it wins
// up to 15 rows and loses from 20 for d 256 against OpenBLAS (whose packing pays off as
// rows grow).
constexpr int64_t kFewRowsLimit = 16;

torch::Tensor linear(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias = {});

// Counts the floating-point operations (2 x rows x in x out) of the products nn::linear
// runs on the constructing thread while it is alive, so that a benchmark can say what
// fraction of the CPU's GEMM peak a training step reaches (bench-train; issue 20). A
// training step's products are then about 3x its forward's: the backward multiplies the
// same shapes twice (input and weight gradients). Attention's score and context products
// are not linear calls and are not counted. Counters nest (the innermost counts).
// Why a scope on the thread rather than a counter passed in: the products it counts are
// deep inside a training step (the trainer, the model's forward through every layer), and
// only a benchmark asks; a parameter through every layer's forward for it would cost each
// layer more than the one pointer test nn::linear makes per product.
class LinearFlopCounter {
 public:
  LinearFlopCounter();
  ~LinearFlopCounter();
  LinearFlopCounter(const LinearFlopCounter&) = delete;
  LinearFlopCounter& operator=(const LinearFlopCounter&) = delete;
  double flops() const { return flops_; }
  // Called by nn::linear: the product it is about to run.
  static void note(const torch::Tensor& x, const torch::Tensor& weight);

 private:
  double flops_ = 0;
  LinearFlopCounter* outer_;
};

// x [..., K] float, weight [N, K] float, bias [N] or undefined -> [..., N]; no autograd.
// Any number of rows works; it pays below kFewRowsLimit.
torch::Tensor few_rows_linear(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias = {});

}  // namespace csan::nn
