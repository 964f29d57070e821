// Parameter counting as fairseq reports it: a tensor shared by several modules (tied
// embeddings) counts once.
#pragma once

#include <cstdint>

#include <torch/torch.h>

namespace csan::nn {

int64_t count_parameters(const torch::nn::Module& module);

}  // namespace csan::nn
