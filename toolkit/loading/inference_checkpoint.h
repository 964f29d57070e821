// Inference-only checkpoints (tools/convert-checkpoint --precision int8|bf16): the
// model's projections stored already converted (int8 values with their per-row scales,
// or bf16: each kernel's stored form, nn/projection_kernel.h), without optimizer state:
// smaller, and csan-generate loads them directly. Training refuses them (there is nothing
// to resume: the fp32 weights are gone).
// The meta's data gains "inference_precision" and "quantize_skip" (space-separated);
// the int8 scales are the "int8_scales" section, one tensor per converted parameter.
#pragma once

#include <optional>
#include <string>

#include "toolkit/checkpoint/checkpoint.h"
#include "toolkit/generation/inference_precision.h"
#include "toolkit/loading/model_loader.h"
#include "toolkit/models/model.h"

namespace csan::loading {

// None for a training checkpoint, else the precision its projections are stored in and
// the layers its --quantize-skip kept fp32. Throws csan::Error naming the file when the
// stored name is not a precision.
std::optional<generation::InferencePrecision> inference_precision_of(const checkpoint::CheckpointReader& reader);

// Loads `input` (a training checkpoint of an encoder-decoder model), converts it and
// writes `output` atomically. Throws csan::Error naming the file or option.
void write_inference_checkpoint(const std::string& input, const std::string& output,
                                const generation::InferencePrecision& precision, const DescribeModel& describe);

// Writes `model` (its projections converted: kernels) into `writer`: each kernel's stored
// weight in its parameter's place, int8 scales in the "int8_scales" section. The model
// is then for writing only.
void store_converted_projections(models::Model& model, checkpoint::CheckpointWriter& writer);

// For the checkpoint loader: gives a freshly built `model` the converted projections'
// stored types, so that `reader`'s stored tensors fit (before CheckpointReader::load_model;
// the model's fp32 weights are never drawn) ...
void prepare_for_inference_checkpoint(models::Model& model, checkpoint::CheckpointReader& reader);
// ... and afterwards makes each loaded weight (with its int8 scales) its projection's kernel.
void restore_inference_checkpoint(models::Model& model, checkpoint::CheckpointReader& reader);

}  // namespace csan::loading
