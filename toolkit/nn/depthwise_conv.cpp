#include "toolkit/nn/depthwise_conv.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <vector>

namespace csan::nn {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// For each filter tap (u, v): output row i reads input row i + u - pad, columns shifted
// by v - pad; `each(i, input_row, u, first, last, shift)` runs over the valid columns.
struct ConvGeometry {
  int64_t rows, cols, k, pad;
  template <typename F>
  void taps(F&& each) const {
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t u = 0; u < k; ++u) {
        const int64_t source = i + u - pad;
        if (source < 0 || source >= rows) continue;
        for (int64_t v = 0; v < k; ++v) {
          const int64_t shift = v - pad;
          each(i, source, u, v, std::max<int64_t>(0, -shift), std::min(cols, cols - shift), shift);
        }
      }
  }
};

ConvGeometry geometry_of(const torch::Tensor& x, const torch::Tensor& weight) {
  const int64_t k = weight.size(2);
  return {x.size(2), x.size(3), k, k / 2};
}

class ReluDepthwiseConv2d : public torch::autograd::Function<ReluDepthwiseConv2d> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& input, const torch::Tensor& weight,
                               const torch::Tensor& bias) {
    const auto x = input.contiguous();
    const auto w = weight.contiguous();
    const auto g = geometry_of(x, w);
    const int64_t channels = x.size(1), plane = g.rows * g.cols, taps = g.k * g.k;
    auto out = torch::empty_like(x);
    const float* xs = x.data_ptr<float>();
    const float* ws = w.data_ptr<float>();
    const float* bs = bias.data_ptr<float>();
    float* os = out.data_ptr<float>();
    at::parallel_for(0, x.size(0) * channels, 1, [&](int64_t begin, int64_t end) {
      for (int64_t bc = begin; bc < end; ++bc) {
        const int64_t c = bc % channels;
        const float* in = xs + bc * plane;
        float* o = os + bc * plane;
        std::fill(o, o + plane, bs[c]);
        g.taps([&](int64_t i, int64_t source, int64_t u, int64_t v, int64_t first, int64_t last, int64_t shift) {
          const float tap = ws[c * taps + u * g.k + v];
          float* row = o + i * g.cols;
          const float* from = in + source * g.cols + shift;
          for (int64_t j = first; j < last; ++j) row[j] += tap * from[j];
        });
        for (int64_t j = 0; j < plane; ++j) o[j] = std::max(o[j], 0.0f);
      }
    });
    ctx->save_for_backward({x, w, out});
    return out;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto &x = saved[0], &w = saved[1], &out = saved[2];
    const auto g = geometry_of(x, w);
    const int64_t batch = x.size(0), channels = x.size(1), plane = g.rows * g.cols, taps = g.k * g.k;
    // ReLU's gradient: through where the output is positive.
    const auto grad = grads[0].contiguous().mul(out.gt(0));
    auto grad_x = torch::zeros_like(x);
    // Per (sentence, channel) filter and bias gradients, summed over sentences below.
    auto grad_w_parts = torch::zeros({batch * channels, taps + 1}, x.options());
    const float* xs = x.data_ptr<float>();
    const float* ws = w.data_ptr<float>();
    const float* gs = grad.data_ptr<float>();
    float* gxs = grad_x.data_ptr<float>();
    float* parts = grad_w_parts.data_ptr<float>();
    at::parallel_for(0, batch * channels, 1, [&](int64_t begin, int64_t end) {
      for (int64_t bc = begin; bc < end; ++bc) {
        const int64_t c = bc % channels;
        const float* in = xs + bc * plane;
        const float* go = gs + bc * plane;
        float* gx = gxs + bc * plane;
        float* part = parts + bc * (taps + 1);
        g.taps([&](int64_t i, int64_t source, int64_t u, int64_t v, int64_t first, int64_t last, int64_t shift) {
          const float tap = ws[c * taps + u * g.k + v];
          const float* row = go + i * g.cols;
          const float* from = in + source * g.cols + shift;
          float* to = gx + source * g.cols + shift;
          float dot = 0;
          for (int64_t j = first; j < last; ++j) {
            to[j] += tap * row[j];
            dot += row[j] * from[j];
          }
          part[u * g.k + v] += dot;
        });
        float sum = 0;
        for (int64_t j = 0; j < plane; ++j) sum += go[j];
        part[taps] = sum;
      }
    });
    const auto per_channel = grad_w_parts.view({batch, channels, taps + 1}).sum(0);
    return {grad_x, per_channel.narrow(1, 0, taps).reshape(w.sizes()), per_channel.select(1, taps)};
  }
};

}  // namespace

torch::Tensor relu_depthwise_conv2d(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias) {
  const int64_t k = weight.size(2);
  if (!x.device().is_cpu() || x.scalar_type() != torch::kFloat || weight.scalar_type() != torch::kFloat ||
      bias.scalar_type() != torch::kFloat)
    return torch::relu(torch::conv2d(x, weight.to(x.scalar_type()), bias.to(x.scalar_type()), 1, k / 2, 1, x.size(1)));
  TORCH_CHECK(x.dim() == 4 && weight.size(0) == x.size(1) && weight.size(1) == 1 && weight.size(3) == k && k % 2 == 1 &&
                  bias.numel() == x.size(1),
              "relu_depthwise_conv2d: x ", x.sizes(), ", weight ", weight.sizes(), ", bias ", bias.sizes());
  return ReluDepthwiseConv2d::apply(x, weight, bias);
}

}  // namespace csan::nn
