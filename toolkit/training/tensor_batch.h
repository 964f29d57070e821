// A collated batch as tensors, the form the model and the criterion consume.
#pragma once

#include <cstdint>

#include <torch/torch.h>

#include "toolkit/data/language_pair_dataset.h"

namespace csan::training {

struct TensorBatch {
  torch::Tensor src_tokens;          // [B, S] int64, right-padded
  torch::Tensor src_lengths;         // [B] int64
  torch::Tensor prev_output_tokens;  // [B, T] int64
  torch::Tensor target;              // [B, T] int64
  int64_t ntokens = 0;               // non-padding target tokens
  int64_t nsentences = 0;
  bool empty() const { return nsentences == 0; }
};

TensorBatch to_tensors(const data::CollatedBatch& batch, const torch::Device& device = torch::kCPU);

}  // namespace csan::training
