// A collated batch as named tensors, the form the criterion and the model consume. The
// task decides the fields (translation: "src_tokens", "src_lengths",
// "prev_output_tokens", "target"); the trainer only counts and moves batches.
#pragma once

#include <torch/torch.h>

#include <cstdint>

#include "toolkit/data/language_pair_dataset.h"
#include "toolkit/models/named_tensors.h"

namespace csan::training {

struct TensorBatch {
  models::NamedTensors fields;
  int64_t ntokens = 0;  // tokens the loss is over (translation: non-padding target tokens)
  int64_t nsentences = 0;
  bool empty() const { return nsentences == 0; }
  TensorBatch to(const torch::Device& device) const { return {fields.to(device), ntokens, nsentences}; }
};

// A row-major token matrix as an int64 [rows, cols] tensor (a copy).
torch::Tensor to_tensor(const data::TokenMatrix& matrix);

}  // namespace csan::training
