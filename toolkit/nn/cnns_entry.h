// CNNs of CSAN's Table 1 (Yu et al. 2018, QANet's encoder block), registered as "cnns":
// before the self-attention sublayer of chosen layers, `conv_layers` depthwise-separable
// convolution sublayers, each
//   x = x + dropout(relu(W_p depthwise_k(x) + b_p))   in the layer's residual form
// (post-norm: normalized after the sum, pre-norm: the convolution reads norm(x)), with
// its own layer norm, as QANet wraps every operation of its encoder block in a residual
// block. depthwise_k convolves each channel with its own kernel of k positions (no
// bias), W_p is the pointwise D x D convolution (TensorFlow's separable_conv2d). The
// encoder's kernel is centred; padding positions read as zeros, so a sentence's result
// does not depend on its batch. In the decoder the kernel covers the position and the
// k - 1 before it, and incremental decoding keeps each sublayer's last inputs.
// Not a change of the attention: an entry whose before() hook the layer runs.
// Keys model.cnns.*; they have values only in recipes whose chains name cnns.
#pragma once

#include <cstdint>
#include <vector>

#include "toolkit/core/config.h"
#include "toolkit/core/option_table.h"
#include "toolkit/nn/attention_entry.h"
#include "toolkit/nn/dense.h"

namespace csan::nn {

struct CnnsOptions {
  int64_t kernel_size = 7;  // QANet's embedding encoder: kernel 7, 4 convolutions per block
  int64_t conv_layers = 4;
  std::vector<int64_t> encoder_layers{0, 1, 2};
  std::vector<int64_t> decoder_layers;

  static CnnsOptions from_config(const core::Config& cfg);
};

const core::OptionTable<CnnsOptions>& cnns_option_table();

// One depthwise-separable convolution with its residual wrapper.
class SeparableConvImpl : public torch::nn::Module {
 public:
  SeparableConvImpl(int64_t dim, int64_t kernel_size);
  // x [B, T, D] (already normalized in pre-norm) -> relu(pointwise(depthwise(x))).
  // causal: the kernel ends at the position; `earlier` [B, <= k-1, D] are the inputs
  // just before x (incremental decoding), zeros where undefined or short.
  torch::Tensor forward(const torch::Tensor& x, bool causal, const torch::Tensor& earlier = {});

  torch::Tensor depthwise;  // [D, 1, k]
  Dense pointwise{nullptr};
  torch::nn::LayerNorm norm{nullptr};

 private:
  int64_t kernel_size_;
};
TORCH_MODULE(SeparableConv);

class CnnsEntry : public AttentionEntry {
 public:
  CnnsEntry(int64_t embed_dim, int64_t kernel_size, int64_t conv_layers, bool normalize_before, double dropout);

  unsigned uses() const override { return kBefore; }
  torch::Tensor before(const torch::Tensor& x, const BeforeInputs& in) override;

  torch::nn::ModuleList convs;

 private:
  int64_t kernel_size_;
  bool normalize_before_;
  double dropout_;
};

}  // namespace csan::nn
