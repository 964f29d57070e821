#include "toolkit/nn/output_vocabulary.h"

namespace csan::nn {

torch::Tensor OutputVocabulary::logits(const torch::Tensor& x, const torch::Tensor& weight,
                                       const Projection& projection) {
  if (projection.kernel()) {
    if (!selected_.kernel()) selected_.set_kernel(projection.kernel()->select_rows(ids_));
  } else if (!rows_.defined()) {
    rows_ = weight.index_select(0, ids_);
  }
  return selected_(x, rows_);
}

torch::Tensor output_logits(const torch::Tensor& x, const torch::Tensor& weight, const Projection& projection,
                            OutputVocabulary* vocabulary) {
  return vocabulary ? vocabulary->logits(x, weight, projection) : projection(x, weight);
}

}  // namespace csan::nn
