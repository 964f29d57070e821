#include "toolkit/nn/dense.h"

namespace csan::nn {

DenseImpl::DenseImpl(int64_t in_features, int64_t out_features, bool with_bias) {
  weight = register_parameter("weight", torch::empty({out_features, in_features}));
  if (with_bias) bias = register_parameter("bias", torch::empty({out_features}));
}

}  // namespace csan::nn
