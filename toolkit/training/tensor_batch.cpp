#include "toolkit/training/tensor_batch.h"

namespace csan::training {

torch::Tensor to_tensor(const data::TokenMatrix& m) {
  return torch::from_blob(const_cast<int64_t*>(m.values.data()), {m.rows, m.cols}, torch::kLong).clone();
}

}  // namespace csan::training
