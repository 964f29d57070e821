// The translation task (fairseq's "translation"): a language pair binarized by
// csan-preprocess (DIR/dict.{src,tgt}.txt, DIR/SPLIT.src-tgt.{src,tgt}.{bin,idx},
// DIR/spm.model), encoder-decoder models, label-smoothed cross-entropy, optional BLEU
// validation, and csan-generate's beam search / sampling on its checkpoints
// (translation_generate.h).
// Batch fields: "src_tokens" [B, S], "src_lengths" [B], "prev_output_tokens" [B, T]
// (</s> then the target shifted right), "target" [B, T].
#pragma once

#include <string>

#include "toolkit/data/language_pair_dataset.h"
#include "toolkit/models/model_context.h"
#include "toolkit/text/dictionary.h"
#include "toolkit/training/tensor_batch.h"

namespace csan::tasks {

// A collated batch of sentence pairs as the task's named tensors.
training::TensorBatch translation_batch(const data::CollatedBatch& collated);

// The model context of a language pair's dictionaries (the one place it is built).
models::ModelContext translation_context(const text::Dictionary& src_dict, const text::Dictionary& tgt_dict);

}  // namespace csan::tasks
