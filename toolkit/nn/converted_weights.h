// Weights converted for fast inference (csan-generate --precision bf16|int8, and fp16 on
// a GPU), and
// the one place nn::linear and token embeddings look them up.
//
// A converted weight stays the model's parameter tensor; only its data is replaced in
// place, so every holder sees it (a tied embedding and output projection, the row
// views MultiheadAttention takes of its fused q|k|v weight):
//   bf16: the weight in bfloat16. Products take fp32 activations, run in bf16 and return
//         fp32, so layer norms, attention's softmax and the search stay in fp32.
//   fp16: the same in IEEE half precision (GPUs: their fp16 tensor cores).
//   int8: the weight's int8 values (a plain kChar tensor, so row views still work) with
//         one symmetric scale per output row (per channel: max |w| / 127), kept here by
//         the weight's storage. Each row view is prepacked once, for csan's AVX512-VNNI
//         kernel (int8_gemm.h) or, on other CPUs, for LibTorch's quantized engine
//         (quantized::linear_dynamic); both quantize the activations per call.
// Conversion is for inference only: converted weights have no gradient.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <set>
#include <string>

namespace csan::nn {

enum class WeightPrecision { Bf16, Fp16, Int8 };

// Converts the float parameter `weight` [N, K] in place (int8: also computes its scales).
// With `values_follow` (an inference checkpoint is about to overwrite it) only the type
// changes: the new values are left unset and the fp32 ones are never read.
void convert_weight(torch::Tensor& weight, WeightPrecision precision, bool values_follow = false);
// An int8 weight as stored by convert-checkpoint: `weight` (already int8, from
// convert_weight) takes `values` [N, K] int8 and `scales` [N] float.
void set_int8_weight(torch::Tensor& weight, const torch::Tensor& values, const torch::Tensor& scales);
// The per-row scales [N] of an int8 weight; throws when `weight` is not one.
torch::Tensor int8_scales(const torch::Tensor& weight);
// True when `weight` was converted here (a bf16 model trained in bf16 is not).
bool is_converted(const torch::Tensor& weight);
// True when any parameter of `module` was converted (bf16, fp16 or int8) for inference.
bool has_converted_weights(const torch::nn::Module& module);
// Decoding with csan's int8 kernel: each int8 weight of `module` frees its plain values
// once all of its rows are packed for the kernel (half of an int8 model's memory); its
// embedding lookups and shortlist rows are then read from the packs. The weights'
// storages keep their sizes but no data, so nothing else may read them (a checkpoint
// cannot be written from the model any more). No effect where LibTorch's engine serves.
void release_packed_int8_values(const torch::nn::Module& module);
// True once `weight`'s plain values were released.
bool int8_values_released(const torch::Tensor& weight);

// y = x W^T + b for a converted W (nn::linear sends every converted weight here); x is
// float, and so is y.
torch::Tensor converted_linear(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias);
// The int8 product of a converted int8 W through LibTorch's quantized engine
// (quantized::linear_dynamic), whatever the CPU: converted_linear's path where csan's
// kernel does not run, and bench-gemm's comparison with it.
torch::Tensor libtorch_int8_linear(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias);
// LibTorch multiplies bf16 matrices on the CPU with oneDNN only where the CPU has AVX-512
// (BW, VL, DQ); elsewhere its reference loop decoded Multi30k test2016 at 1 sentence/s
// against fp32's 52 (AVX2 EPYC). There bf16 products are emulated (bf16_linear_in_fp32).
bool bf16_products_emulated();
// x W^T + b with oneDNN's bf16 roundings at fp32 speed: x and b rounded to bf16, the bf16
// W widened for this product (the model keeps bf16's memory), fp32 accumulation, the
// result rounded to bf16 and returned as float.
torch::Tensor bf16_linear_in_fp32(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias);
// Rows `tokens` of a converted embedding table (one tied to the output projection), as
// float (int8: values times their row's scale).
torch::Tensor converted_embedding(const torch::Tensor& weight, const torch::Tensor& tokens);
// Rows `rows` (int64) of a weight [V, D], in the weight's precision (a shortlist's
// output projection): float, bf16 or int8 with the rows' scales.
torch::Tensor select_weight_rows(const torch::Tensor& weight, const torch::Tensor& rows);

// While alive, records the storages of the weights that reach nn::linear on this thread:
// run one forward pass under it to learn which parameters are projections. (Their
// biases stay fp32: bf16 products convert them per call, int8 ones pack them.)
//
// With `skip_products`, nn::linear returns zeros of the product's shape while the recorder
// is alive, without reading the weight: a model about to load an inference checkpoint has
// undrawn fp32 weights, and the products' reads faulted them all into memory (transformer_base:
// ~180 MiB at the peak of an int8 load that ends with 47 MB of int8 weights).
class LinearWeightRecorder {
 public:
  explicit LinearWeightRecorder(bool skip_products = false);
  ~LinearWeightRecorder();
  LinearWeightRecorder(const LinearWeightRecorder&) = delete;
  LinearWeightRecorder& operator=(const LinearWeightRecorder&) = delete;

  static void note(const torch::Tensor& weight);
  // True while the innermost recorder on this thread skips products.
  static bool products_skipped();
  bool is_weight(const torch::Tensor& parameter) const;

 private:
  std::set<const void*> weights_;
  bool skip_products_;
  LinearWeightRecorder* previous_;
};

// What multiplies int8 weights here: "csan avx512-vnni" (int8_gemm.h) where the CPU has
// AVX512-VNNI, else LibTorch's quantized engine, chosen by select_quantized_engine.
std::string select_int8_products();

// The quantized engine int8 products use: the best that this LibTorch offers (x86 or
// fbgemm, then onednn, then qnnpack), made current. Throws csan::Error when there is none.
std::string select_quantized_engine();

// True on a CPU without VNNI (avx512_vnni, avx_vnni or amx_int8): there the u8 x s8
// products add pairs into a saturating int16 (vpmaddubsw), so int8 activations are
// quantized to 7 bits instead of 8 (reduce_range, as PyTorch's dynamic quantization does).
bool int8_activations_reduced();

}  // namespace csan::nn
