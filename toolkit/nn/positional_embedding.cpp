#include "toolkit/nn/positional_embedding.h"

#include <cmath>

#include "toolkit/core/error.h"
#include "toolkit/nn/init.h"

namespace csan::nn {

torch::Tensor make_positions(const torch::Tensor& tokens, int64_t padding_idx, int64_t start) {
  torch::Tensor real = tokens.ne(padding_idx).to(torch::kLong);
  return (torch::cumsum(real, 1) + start) * real + padding_idx;
}

torch::Tensor sinusoidal_table(int64_t num_embeddings, int64_t dim, int64_t padding_idx) {
  const int64_t half = dim / 2;
  const double step = std::log(10000.0) / static_cast<double>(half - 1);
  torch::Tensor freq = torch::exp(torch::arange(half, torch::kFloat) * -step);
  torch::Tensor angles = torch::arange(num_embeddings, torch::kFloat).unsqueeze(1) * freq.unsqueeze(0);
  torch::Tensor table = torch::cat({torch::sin(angles), torch::cos(angles)}, 1);
  if (dim % 2 == 1) table = torch::cat({table, torch::zeros({num_embeddings, 1})}, 1);
  if (padding_idx >= 0 && padding_idx < num_embeddings) table[padding_idx].zero_();
  return table;
}

torch::Tensor marian_sinusoidal_table(int64_t num_embeddings, int64_t dim) {
  // transformers computes the angles in float64 (numpy) before storing float32.
  const auto f64 = torch::TensorOptions().dtype(torch::kDouble);
  torch::Tensor j = torch::arange(dim, f64);
  torch::Tensor exponent = torch::floor(j / 2) * 2 / static_cast<double>(dim);
  torch::Tensor angles = torch::arange(num_embeddings, f64).unsqueeze(1) / torch::pow(10000.0, exponent).unsqueeze(0);
  using torch::indexing::None;
  using torch::indexing::Slice;
  torch::Tensor table = torch::cat(
      {torch::sin(angles.index({Slice(), Slice(0, None, 2)})), torch::cos(angles.index({Slice(), Slice(1, None, 2)}))},
      1);
  return table.to(torch::kFloat);
}

PositionalEmbeddingImpl::PositionalEmbeddingImpl(const PositionalEmbeddingOptions& options) : options_(options) {
  if (options.marian) {
    if (options.learned) throw Error("positional embedding: Marian's table is not learned");
    table_ = marian_sinusoidal_table(options.max_positions, options.embed_dim);
    return;
  }
  const int64_t rows = options.max_positions + options.padding_idx + 1;
  if (options.learned) {
    weight = register_parameter("weight", torch::empty({rows, options.embed_dim}));
    init_normal(weight, std::pow(static_cast<double>(options.embed_dim), -0.5));
    init_constant(weight[options.padding_idx], 0.0);
  } else {
    table_ = sinusoidal_table(rows, options.embed_dim, options.padding_idx);
  }
}

torch::Tensor PositionalEmbeddingImpl::forward(const torch::Tensor& tokens, int64_t start) {
  if (options_.marian) {
    const torch::Tensor rows =
        torch::arange(start, start + tokens.size(1), tokens.options().dtype(torch::kLong)).expand_as(tokens);
    return torch::embedding(sinusoidal_rows(start + tokens.size(1), tokens.device()), rows);
  }
  torch::Tensor positions = make_positions(tokens, options_.padding_idx, start);
  const int64_t needed = options_.padding_idx + 1 + start + tokens.size(1);
  if (options_.learned) {
    if (needed > weight.size(0))
      throw Error("sequence of " + std::to_string(start + tokens.size(1)) + " tokens exceeds max positions " +
                  std::to_string(options_.max_positions));
    return torch::embedding(weight, positions, options_.padding_idx);
  }
  return torch::embedding(sinusoidal_rows(needed, tokens.device()), positions);
}

torch::Tensor PositionalEmbeddingImpl::sinusoidal_rows(int64_t needed, const torch::Device& device) {
  // Decoders on several threads (csan-generate --parallel-batches) share this module.
  std::lock_guard<std::mutex> lock(table_mutex_);
  if (needed > table_.size(0))
    table_ = options_.marian ? marian_sinusoidal_table(needed, options_.embed_dim)
                             : sinusoidal_table(needed, options_.embed_dim, options_.padding_idx);
  if (table_.device() != device) table_ = table_.to(device);
  return table_;
}

}  // namespace csan::nn
