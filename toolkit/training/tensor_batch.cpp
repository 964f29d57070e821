#include "toolkit/training/tensor_batch.h"

namespace csan::training {

namespace {
torch::Tensor matrix(const data::TokenMatrix& m) {
  return torch::from_blob(const_cast<int64_t*>(m.values.data()), {m.rows, m.cols}, torch::kLong).clone();
}
}  // namespace

TensorBatch to_tensors(const data::CollatedBatch& batch, const torch::Device& device) {
  TensorBatch t;
  t.nsentences = batch.nsentences();
  t.ntokens = batch.ntokens;
  if (t.nsentences == 0) return t;
  t.src_tokens = matrix(batch.src_tokens).to(device);
  t.src_lengths = torch::tensor(batch.src_lengths, torch::kLong).to(device);
  t.prev_output_tokens = matrix(batch.prev_output_tokens).to(device);
  t.target = matrix(batch.target).to(device);
  return t;
}

}  // namespace csan::training
