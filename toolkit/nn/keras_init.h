// Keras 2.2.4's initializers, for models that reproduce code written in Keras (the
// convoluted-attention tagger). Fans are those Keras computes from ITS kernel shape,
// which differs from LibTorch's layout, so callers pass the Keras shape:
//   Dense (in, out); Conv1D (width, in, out); Conv2D (h, w, in, out); a weight vector (n,).
// Like the helpers of init.h, they do nothing while a SkipInitialization is alive.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <vector>

namespace csan::nn {

struct Fans {
  double in = 0, out = 0;
};

// keras.initializers._compute_fans: 2-D (in, out); 3-5-D: receptive field x the last
// two dimensions; otherwise sqrt(number of elements) for both.
Fans keras_fans(const std::vector<int64_t>& keras_shape);

// glorot_normal: a normal truncated at two standard deviations (TensorFlow redraws values
// beyond), stddev sqrt(1 / max(1, (fan_in + fan_out) / 2)) / 0.87962566103423978 (the
// correction that makes the truncated distribution's deviation the Glorot one).
void init_glorot_normal(torch::Tensor t, const std::vector<int64_t>& keras_shape);
// glorot_uniform: U(-limit, limit), limit sqrt(6 / (fan_in + fan_out)) (Dense and Conv
// kernels' default).
void init_glorot_uniform(torch::Tensor t, const std::vector<int64_t>& keras_shape);
// The Embedding layer's default: U(-0.05, 0.05).
void init_keras_embedding(torch::Tensor t);

// The standard deviation init_glorot_normal uses for `keras_shape` (before truncation).
double glorot_normal_stddev(const std::vector<int64_t>& keras_shape);

}  // namespace csan::nn
