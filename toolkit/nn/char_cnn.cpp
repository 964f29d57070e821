#include "toolkit/nn/char_cnn.h"

#include <string_view>
#include <unordered_map>

#include "toolkit/core/error.h"
#include "toolkit/nn/init.h"
#include "toolkit/nn/keras_init.h"

namespace csan::nn {

CharCnnImpl::CharCnnImpl(const CharCnnOptions& o) {
  if (o.width % 2 == 0) throw Error("character CNN: the filter width must be odd ('same' padding), got " +
                                    std::to_string(o.width));
  embedding = register_parameter("embedding", torch::empty({o.vocab_size, o.embed_dim}));
  init_keras_embedding(embedding);
  for (int64_t l = 0; l < o.layers; ++l) {
    const int64_t in = l == 0 ? o.embed_dim : o.filters;
    weights.push_back(register_parameter("conv" + std::to_string(l) + "_weight", torch::empty({o.filters, in, o.width})));
    biases.push_back(register_parameter("conv" + std::to_string(l) + "_bias", torch::empty({o.filters})));
    init_glorot_uniform(weights.back(), {o.width, in, o.filters});
    init_constant(biases.back(), 0.0);
  }
}

torch::Tensor CharCnnImpl::encode(const torch::Tensor& rows) {
  auto x = embedding.index_select(0, rows.reshape({-1})).view({rows.size(0), rows.size(1), -1}).transpose(1, 2);
  for (size_t l = 0; l < weights.size(); ++l)
    x = torch::relu(torch::conv1d(x, weights[l], biases[l], 1, weights[l].size(2) / 2));
  return std::get<0>(x.max(2));  // over the character slots
}

namespace {

// The distinct rows of `rows` [N, C] (int64) and, for each row, the index of its
// distinct row. On the CPU a hash of the row's bytes finds them in one pass
// (torch::unique_dim sorts rows with an element-wise comparator, far slower).
std::pair<torch::Tensor, torch::Tensor> distinct_rows(const torch::Tensor& rows) {
  if (!rows.device().is_cpu()) {
    auto [distinct, which, counts] = torch::unique_dim(rows, 0, /*sorted=*/false, /*return_inverse=*/true);
    (void)counts;
    return {distinct, which};
  }
  const auto contiguous = rows.to(torch::kLong).contiguous();
  const int64_t n = contiguous.size(0), width = contiguous.size(1);
  const auto* data = contiguous.data_ptr<int64_t>();
  const size_t bytes = static_cast<size_t>(width) * sizeof(int64_t);
  std::unordered_map<std::string_view, int64_t> first_row;
  first_row.reserve(static_cast<size_t>(n));
  auto which = torch::empty({n}, torch::kLong);
  auto* w = which.data_ptr<int64_t>();
  std::vector<int64_t> kept;
  for (int64_t r = 0; r < n; ++r) {
    const std::string_view key(reinterpret_cast<const char*>(data + r * width), bytes);
    auto [it, inserted] = first_row.emplace(key, static_cast<int64_t>(kept.size()));
    if (inserted) kept.push_back(r);
    w[r] = it->second;
  }
  return {contiguous.index_select(0, torch::tensor(kept, torch::kLong)), which};
}

}  // namespace

torch::Tensor CharCnnImpl::forward(const torch::Tensor& chars) {
  const int64_t slots = chars.size(-1);
  auto [spellings, which] = distinct_rows(chars.reshape({-1, slots}));
  auto out = encode(spellings).index_select(0, which);
  auto sizes = chars.sizes().vec();
  sizes.back() = out.size(1);
  return out.view(sizes);
}

torch::Tensor CharCnnImpl::forward_every_word(const torch::Tensor& chars) {
  auto out = encode(chars.reshape({-1, chars.size(-1)}));
  auto sizes = chars.sizes().vec();
  sizes.back() = out.size(1);
  return out.view(sizes);
}

}  // namespace csan::nn
