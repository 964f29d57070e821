// csan-generate --precision fp32|bf16|int8|fp16 [--quantize-skip LAYER ...]: converts the
// projections of loaded models once, before decoding. Each projection of a model
// (nn/projection.h: attention and feed-forward layers, the output projection, an
// embedding tied to it) gets the kernel its precision's kind makes (nn/projection_kind.h),
// which holds the weight in that precision's form; the model is found by walking its
// modules, so any architecture built on nn::Projection converts without a table of names
// here. Embeddings that are only looked up, positions, layer norms and biases stay fp32;
// log-probabilities and beam scores are always fp32.
#pragma once

#include <torch/torch.h>

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "toolkit/models/encoder_decoder_model.h"
#include "toolkit/nn/precision.h"
#include "toolkit/nn/projection.h"

namespace csan::generation {

struct InferencePrecision {
  nn::Precision precision = nn::Precision::fp32;
  std::vector<std::string> quantize_skip;  // layers (parameter-name prefixes) kept fp32
};

// Throws csan::Error naming the option: a precision without a kernel for the devices at
// hand (fp16 without a CUDA GPU), or --quantize-skip with a precision that converts nothing.
void validate(const InferencePrecision& precision);

// The warning for a CPU without the instructions `precision` is fast with (avx512_bf16
// for bf16, avx512_vnni for int8), given whether it has them; "" when it does or needs none.
std::string missing_cpu_flag_warning(nn::Precision precision, bool has_flag);
// The same for this CPU.
std::string missing_cpu_flag_warning(nn::Precision precision);

// What converting `model` to `precision` does: the float projections to convert and the
// names of those --quantize-skip keeps. Throws csan::Error when a --quantize-skip name
// names no projection (a parameter name or a prefix ending at a '.'), listing those that exist.
struct ConversionPlan {
  std::vector<nn::NamedProjection> convert;
  std::vector<std::string> skipped;
  std::vector<nn::NamedProjection> converted_already;  // an inference checkpoint's, converted when it was written
};
ConversionPlan plan_conversion(torch::nn::Module& model, const InferencePrecision& precision);

struct ConversionReport {
  std::vector<std::string> converted;  // parameter names, in the model's order
  std::vector<std::string> skipped;    // projections kept fp32 by --quantize-skip
  std::string engine;                  // what multiplies, where the kind says (int8: csan avx512-vnni, onednn, ...)
};

// Converts `model`'s projections (fp32: nothing) and switches it to eval mode.
ConversionReport convert_for_inference(torch::nn::Module& model, const InferencePrecision& precision);

// Converts every model of an ensemble and writes one log line (precision, layers, engine,
// and the CPU warning when there is one).
void convert_ensemble(const std::vector<std::shared_ptr<models::EncoderDecoderModel>>& models,
                      const InferencePrecision& precision, std::ostream& log);

}  // namespace csan::generation
