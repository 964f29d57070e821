// The safetensors layout (https://github.com/huggingface/safetensors):
//   8 bytes   N, the header's length, unsigned little-endian
//   N bytes   a UTF-8 JSON object: {"NAME": {"dtype": "F32", "shape": [2, 3],
//             "data_offsets": [BEGIN, END]}, ..., "__metadata__": {"key": "value", ...}}
//             (may be padded with spaces)
//   the rest  the data region: each tensor's bytes (row-major, little-endian) at
//             [BEGIN, END) relative to the region's start; the tensors cover it exactly,
//             without overlap or hole.
// csan's writer pads the header so that the data starts at a multiple of kDataAlignment
// and orders the tensors by decreasing element size, so every tensor of a file it wrote is
// aligned to its element size in a mapping of the file and can be used where it lies.
//
// Checkpoint format 3 (toolkit/checkpoint: CheckpointWriter, format3_reader.cpp) on this
// layer. One file per checkpoint as before, written by Writer (atomic, checksummed, tensors
// streamed from the model: a GPU tensor copied to the CPU in pieces) and read by Reader
// with ChecksumPolicy::kRequire. What formats 1 and 2 kept in LibTorch's pickled archive
// maps as follows; no pickle remains.
//   Tensors (row-major, in the model's own dtype):
//     NAME                        each parameter and buffer under its Module::named_parameters()
//                                 / named_buffers() name ("decoder.layers.0.fc1.weight"), so
//                                 that Python's safetensors load_file() is a state dict (a
//                                 tied parameter appears under each of its names).
//     optimizer.NAME.FIELD        per-parameter optimizer state under the parameter's name
//                                 (LibTorch keys it by TensorImpl address; the optimizer's
//                                 parameters are named by position among the model's distinct
//                                 parameters, so fp32 masters get their model parameter's
//                                 name): Adam/AdamW exp_avg, exp_avg_sq (max_exp_avg_sq with
//                                 amsgrad) like the parameter, step I64 []; RMSprop
//                                 square_avg (momentum_buffer, grad_avg when used), step I64 [].
//                                 A parameter not stepped yet has none.
//     section.SECTION.KEY         a component's state (checkpoint/section.h): precision's loss
//                                 scaler (loss_scale F64 [], iter, last_overflow_iter,
//                                 last_rescale_iter, overflows_since_rescale I64 []) and fp32
//                                 master weights (master.I F32, I the parameter's position
//                                 among the model's distinct parameters); the EMA of the
//                                 weights (--store-ema: ema.NAME F32, NAME a distinct
//                                 parameter's name); an int8 inference checkpoint's per-row
//                                 scales (int8_scales.NAME F32 [N]).
//                                 0-dim tensors keep doubles and counters exact.
//     rng.cpu, rng.cuda           generator states, U8 [n] (at::Generator::get_state()).
//     meta.data.NAME              a task data entry that is not valid UTF-8 (the SentencePiece
//                                 model, a binary protobuf), U8 [n].
//   __metadata__ (strings; Python's safe_open(...).metadata() shows them):
//     csan.format "3"; csan.task; csan.recipe (the resolved YAML); csan.run_info (JSON);
//     csan.data.NAME for each text entry of CheckpointMeta::data (src_lang, tgt_lang,
//     src_dict, tgt_dict as dict.txt text, inference_precision, quantize_skip);
//     csan.progress: JSON {"epoch", "next_batch", "num_updates", "best_metric" (a JSON
//     number in the shortest form that reads back to the same double; inf/nan as text),
//     "has_best", "bad_validations", "nan_streak", "lr_schedule_start" (0 when absent)};
//     csan.optimizer: JSON {"name": "adam" |
//     "adamw" | "rmsprop", "param_groups": [{"options": {lr, betas, eps, weight_decay,
//     amsgrad | lr, alpha, eps, weight_decay, momentum, centered}, "params": [names in
//     order]}]}; csan.sections: JSON list of the sections' names (a section may be empty).
//   Inference checkpoints (convert-checkpoint --precision bf16|int8) store each converted
//   projection under its parameter name as BF16 [N, K], or as I8 [N, K] with
//   section.int8_scales.NAME F32 [N]. Every tensor is aligned to its element size in the
//   mapping (kDataAlignment, largest elements first), so CheckpointReader::load_model with
//   adopt (csan-generate) wraps fp32, bf16 and int8 weights with torch::from_blob over
//   Reader's mapping (a deleter holding Reader::mapping()) instead of copying them: one
//   resident copy, paged in from the page cache. bf16 kernels use the stored [N, K] as it
//   is; the int8 kernels repack once at load (csan's VNNI kernel packs the rows, LibTorch's
//   fbgemm kernel prepacks them), after which the mapped values are not used. Storing the
//   packed rows too (U8, with the kernel's layout version in the metadata) would make those
//   in place as well. Formats 1 and 2 keep loading through the pickle reader
//   (checkpoint/legacy_archive.h); CheckpointReader tells them apart by the first bytes (a
//   zip's "PK" against an 8-byte length).
#pragma once

#include <cstddef>
#include <cstdint>

namespace csan::safetensors {

constexpr size_t kLengthBytes = 8;
// safetensors' own reader refuses a longer header; so do csan's reader and writer.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;
// Where the data region starts in files csan writes (a cache line; mappings start on a page).
constexpr size_t kDataAlignment = 64;
// The reserved key of the header's metadata map.
constexpr const char* kMetadataKey = "__metadata__";

}  // namespace csan::safetensors
