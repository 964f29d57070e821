#include "toolkit/nn/keras_init.h"

#include <algorithm>
#include <cmath>

#include "toolkit/core/error.h"
#include "toolkit/nn/init.h"

namespace csan::nn {

namespace {

// TensorFlow's truncated_normal keeps draws within two standard deviations.
constexpr double kTruncation = 2.0;
// The standard deviation of a unit normal truncated to [-2, 2].
constexpr double kTruncatedStddev = 0.87962566103423978;

double element_count(const std::vector<int64_t>& shape) {
  double n = 1;
  for (int64_t d : shape) n *= static_cast<double>(d);
  return n;
}

void check_size(const torch::Tensor& t, const std::vector<int64_t>& keras_shape) {
  if (static_cast<double>(t.numel()) != element_count(keras_shape))
    throw Error("Keras initializer: a tensor of " + std::to_string(t.numel()) + " elements for a Keras shape of " +
                std::to_string(static_cast<int64_t>(element_count(keras_shape))));
}

}  // namespace

Fans keras_fans(const std::vector<int64_t>& shape) {
  if (shape.size() == 2) return {double(shape[0]), double(shape[1])};
  if (shape.size() >= 3 && shape.size() <= 5) {
    double receptive_field = 1;
    for (size_t i = 0; i + 2 < shape.size(); ++i) receptive_field *= double(shape[i]);
    return {double(shape[shape.size() - 2]) * receptive_field, double(shape.back()) * receptive_field};
  }
  const double side = std::sqrt(element_count(shape));
  return {side, side};
}

double glorot_normal_stddev(const std::vector<int64_t>& keras_shape) {
  const Fans fans = keras_fans(keras_shape);
  return std::sqrt(1.0 / std::max(1.0, (fans.in + fans.out) / 2.0)) / kTruncatedStddev;
}

void init_glorot_normal(torch::Tensor t, const std::vector<int64_t>& keras_shape) {
  check_size(t, keras_shape);
  if (initialization_skipped()) return;
  torch::NoGradGuard no_grad;
  const double stddev = glorot_normal_stddev(keras_shape);
  t.normal_(0.0, stddev);
  // Redraw what lies beyond the truncation, as TensorFlow does, until nothing does.
  while (true) {
    auto outside = t.abs() > kTruncation * stddev;
    const int64_t n = outside.sum().item<int64_t>();
    if (n == 0) return;
    t.masked_scatter_(outside, torch::empty({n}, t.options()).normal_(0.0, stddev));
  }
}

void init_glorot_uniform(torch::Tensor t, const std::vector<int64_t>& keras_shape) {
  check_size(t, keras_shape);
  const Fans fans = keras_fans(keras_shape);
  const double limit = std::sqrt(6.0 / (fans.in + fans.out));
  init_uniform(t, -limit, limit);
}

void init_keras_embedding(torch::Tensor t) { init_uniform(t, -0.05, 0.05); }

}  // namespace csan::nn
