#include "toolkit/models/ccn_input_corruption.h"

#include <algorithm>
#include <vector>

namespace csan::models {

torch::Tensor swap_two_tokens(const torch::Tensor& tokens, double probability, int64_t pad_index) {
  if (probability <= 0 || tokens.size(1) < 3) return tokens;
  const int64_t rows = tokens.size(0);
  // Tokens before the </s>: the sentence is right-padded, so they are positions 0 .. n-1.
  const torch::Tensor movable = tokens.ne(pad_index).sum(1).sub(1).cpu();  // [B]
  // Drawn on the CPU whatever the device: one generator, one seeded stream.
  const torch::Tensor draws = torch::rand({rows, 3}, torch::kDouble);
  const auto n = movable.accessor<int64_t, 1>();
  const auto u = draws.accessor<double, 2>();
  std::vector<int64_t> swap_rows, first, second;
  for (int64_t r = 0; r < rows; ++r) {
    if (u[r][0] >= probability || n[r] < 2) continue;
    const int64_t i = std::min<int64_t>(static_cast<int64_t>(u[r][1] * n[r]), n[r] - 1);
    int64_t j = std::min<int64_t>(static_cast<int64_t>(u[r][2] * (n[r] - 1)), n[r] - 2);
    if (j >= i) ++j;  // uniform over the positions other than i
    swap_rows.push_back(r), first.push_back(i), second.push_back(j);
  }
  if (swap_rows.empty()) return tokens;
  const auto device = tokens.device();
  const torch::Tensor r = torch::tensor(swap_rows).to(device), a = torch::tensor(first).to(device),
                      b = torch::tensor(second).to(device);
  torch::Tensor out = tokens.clone();
  out.index_put_({r, a}, tokens.index({r, b}));
  out.index_put_({r, b}, tokens.index({r, a}));
  return out;
}

}  // namespace csan::models
