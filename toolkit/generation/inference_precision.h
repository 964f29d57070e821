// csan-generate --precision fp32|bf16|int8 [--quantize-skip LAYER ...]: converts the
// projections of loaded models once, before decoding (nn/converted_weights.h says how
// products then run). What counts as a projection is learnt, not listed: one forward
// pass on a two-token sentence records every weight that reaches nn::linear (the
// attention and feed-forward layers, the output projection, an embedding tied to it),
// so any architecture built on nn::linear converts without a table of names here.
// Embeddings that are only looked up, positions, layer norms and biases of int8 layers
// stay fp32; log-probabilities and beam scores are always fp32.
#pragma once

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "toolkit/models/encoder_decoder_model.h"

namespace csan::generation {

struct InferencePrecision {
  std::string name = "fp32";               // fp32, bf16, int8 (CPU) or fp16 (GPU)
  std::vector<std::string> quantize_skip;  // layers (parameter-name prefixes) kept fp32
};

// Throws csan::Error naming the option: an unknown precision, fp16 without a CUDA GPU,
// or --quantize-skip without bf16/int8/fp16.
void validate(const InferencePrecision& precision);

// The warning for a CPU without the instructions `precision` is fast with (avx512_bf16
// for bf16, avx512_vnni for int8), given whether it has them; "" when it does or needs none.
std::string missing_cpu_flag_warning(const std::string& precision, bool has_flag);
// The same for this CPU.
std::string missing_cpu_flag_warning(const std::string& precision);

struct ConversionReport {
  std::vector<std::string> converted;  // parameter names, in the model's order
  std::vector<std::string> skipped;    // projections kept fp32 by --quantize-skip
  std::string engine;                  // int8: what multiplies (csan avx512-vnni, onednn, ...)
};

// Converts `model`'s projections in place (fp32: nothing). A --quantize-skip name must
// name a projection (a parameter name or a prefix ending at a '.'), or csan::Error says
// which exist. `vocab_token` is a valid token id for the recording pass (e.g. </s>).
// `values_follow`: the weights' values come next from an inference checkpoint, so the
// projections only change type (nn::convert_weight).
ConversionReport convert_for_inference(models::EncoderDecoderModel& model, const InferencePrecision& precision,
                                       int64_t vocab_token, bool values_follow = false);

// Converts every model of an ensemble and writes one log line (precision, layers, engine,
// and the CPU warning when there is one).
void convert_ensemble(const std::vector<std::shared_ptr<models::EncoderDecoderModel>>& models,
                      const InferencePrecision& precision, int64_t vocab_token, std::ostream& log);

}  // namespace csan::generation
