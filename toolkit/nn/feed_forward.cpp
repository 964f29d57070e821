#include "toolkit/nn/feed_forward.h"

#include "toolkit/core/error.h"
#include "toolkit/nn/fused_dropout.h"
#include "toolkit/nn/init.h"

namespace csan::nn {

FeedForwardImpl::FeedForwardImpl(const FeedForwardOptions& options) : options_(options) {
  if (options.activation == "gelu")
    activation_ = Activation::gelu;
  else if (options.activation == "swish")
    activation_ = Activation::swish;
  else if (options.activation != "relu")
    throw Error("feed-forward: unknown activation '" + options.activation + "'; known: gelu, relu, swish");
  fc1 = register_module("fc1", Dense(options.embed_dim, options.ffn_dim));
  fc2 = register_module("fc2", Dense(options.ffn_dim, options.embed_dim));
  for (auto* fc : {&fc1, &fc2}) {
    init_xavier_uniform((*fc)->weight);
    init_constant((*fc)->bias, 0.0);
  }
}

torch::Tensor FeedForwardImpl::forward(const torch::Tensor& x) {
  torch::Tensor h = fc1(x);
  switch (activation_) {
    case Activation::relu:
      h = torch::relu_(h);
      break;
    case Activation::gelu:
      h = torch::gelu(h);
      break;
    case Activation::swish:
      h = torch::silu(h);
      break;
  }
  if (is_training() && options_.activation_dropout > 0) h = fused_dropout(h, options_.activation_dropout);
  return fc2(h);
}

}  // namespace csan::nn
