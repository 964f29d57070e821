// int8 projections (csan-generate --precision int8, CPU): the weight's int8 values with
// one symmetric scale per output row (per channel: max |w| / 127), multiplied with
// activations quantized per call. Two engines:
//   csan's AVX512-VNNI kernel (int8_gemm.h) where the CPU has it: the weight is packed
//     once, at conversion, and the pack is all the projection keeps (embedding and
//     shortlist rows, and an inference checkpoint's values, are read back from it);
//   LibTorch's quantized engine (quantized::linear_dynamic) elsewhere: the projection
//     keeps the int8 values and prepacks each row range it is asked for once.
#pragma once

#include <torch/torch.h>

#include <memory>
#include <string>

#include "toolkit/nn/projection_kernel.h"

namespace csan::nn {

struct Int8Weight {
  torch::Tensor values;  // [N, K] int8
  torch::Tensor scales;  // [N] float
};

// Symmetric per-row quantization: zero points stay 0, which every engine's per-channel
// kernel needs; an all-zero row (the padding embedding) keeps a tiny positive scale.
Int8Weight quantize_per_row(const torch::Tensor& weight);

enum class Int8Engine { csan_vnni, libtorch };
// csan's kernel where it runs, else LibTorch's. CSAN_INT8_KERNEL=libtorch chooses
// LibTorch's even where csan's runs: the side-by-side benchmark of the two, the check of
// LibTorch's path on a VNNI machine, and a way around a kernel bug.
Int8Engine int8_engine();

// The kernel of `weight` on `engine` (csan_vnni needs int8_gemm_available()).
std::shared_ptr<const ProjectionKernel> int8_kernel(const Int8Weight& weight, Int8Engine engine);

// The quantized engine LibTorch's int8 products use: the best that this LibTorch offers
// (x86 or fbgemm, then onednn, then qnnpack), made current. Throws csan::Error when there is none.
std::string select_quantized_engine();

// True on a CPU without VNNI (avx512_vnni, avx_vnni or amx_int8): there the u8 x s8
// products add pairs into a saturating int16 (vpmaddubsw), so LibTorch's int8 activations
// are quantized to 7 bits instead of 8 (reduce_range, as PyTorch's dynamic quantization does).
bool int8_activations_reduced();

}  // namespace csan::nn
