// The score that hides a key from a query: what masks and the locality entries' biases
// add, in the type the scores have.
#pragma once

#include <torch/torch.h>

namespace csan::nn {

// Added to the score of a key a mask hides. Finite, as in the first author's code
// (-1e9): a query whose every key is hidden (a padding position's backward direction or
// empty block) then averages its visible keys instead of producing NaN, while any
// visible key still takes all of the probability (exp(-1e9) is 0 in float).
constexpr double kHiddenScore = -1e9;

// kHiddenScore as a score of type `dtype` can hold it: fp16 ends at -65504 (-1e9 would
// become -inf, and a query whose every key is hidden NaN), so there half that, which a
// score added to it leaves finite and whose exp is still 0 in the float softmax.
double hidden_score(torch::ScalarType dtype);

// An additive bias (float; hidden keys at kHiddenScore or below, where entries' biases
// add up) in the scores' type `dtype`, its hidden entries at hidden_score(dtype).
torch::Tensor bias_as(const torch::Tensor& bias, torch::ScalarType dtype);

}  // namespace csan::nn
