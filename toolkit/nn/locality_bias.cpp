#include "toolkit/nn/locality_bias.h"

#include "toolkit/nn/init.h"

namespace csan::nn {

torch::Tensor visible_key_count(const AttentionInputs& in) {
  const auto options = torch::dtype(torch::kFloat).device(in.device());
  const bool causal = in.site && in.site->causal;
  torch::Tensor count;
  if (!in.key_padding_mask.defined()) {
    count = causal ? (in.query_positions() + 1).to(torch::kFloat).view({1, 1, -1, 1})
                   : torch::full({1, 1, 1, 1}, double(in.key_length), options);
  } else {
    const torch::Tensor seen = in.key_padding_mask.logical_not().to(torch::kFloat);  // [Bk, Tk]
    count = causal ? seen.cumsum(1).index_select(1, in.query_positions()).unsqueeze(1).unsqueeze(-1)
                   : seen.sum(1).view({-1, 1, 1, 1});
    const int64_t rows = in.q.size(0);
    if (count.size(0) != rows) count = count.repeat_interleave(rows / count.size(0), 0);
  }
  return count;
}

PositionPredictorImpl::PositionPredictorImpl(int64_t embed_dim, int64_t hidden_width, int64_t outputs) {
  hidden = register_module("hidden", Dense(embed_dim, hidden_width));
  out = register_module("out", Dense(hidden_width, outputs));
  for (Dense* layer : {&hidden, &out}) {
    init_xavier_uniform((*layer)->weight);
    init_constant((*layer)->bias, 0.0);
  }
}

torch::Tensor PositionPredictorImpl::forward(const torch::Tensor& q) {
  return torch::sigmoid(out(torch::tanh(hidden(q))));
}

}  // namespace csan::nn
