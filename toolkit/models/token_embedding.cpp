#include "toolkit/models/token_embedding.h"

#include <cmath>

#include "toolkit/nn/init.h"

namespace csan::models {

TokenEmbeddingImpl::TokenEmbeddingImpl(int64_t vocab_size, int64_t dim, int64_t padding_idx)
    : padding_idx_(padding_idx) {
  weight = register_parameter("weight", torch::empty({vocab_size, dim}));
  nn::init_normal(weight, std::pow(static_cast<double>(dim), -0.5));
  nn::init_constant(weight[padding_idx], 0.0);
}

}  // namespace csan::models
