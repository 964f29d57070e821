#include "toolkit/nn/output_vocabulary.h"

#include "toolkit/nn/converted_weights.h"
#include "toolkit/nn/linear.h"

namespace csan::nn {

namespace {
thread_local OutputVocabulary* in_force = nullptr;
}  // namespace

const torch::Tensor& OutputVocabulary::rows_of(const torch::Tensor& projection) {
  if (!weight.defined()) weight = select_weight_rows(projection, ids);
  return weight;
}

OutputVocabularyScope::OutputVocabularyScope(OutputVocabulary* vocabulary) : previous_(in_force) {
  in_force = vocabulary;
}
OutputVocabularyScope::~OutputVocabularyScope() { in_force = previous_; }

OutputVocabulary* OutputVocabularyScope::current() { return in_force; }

torch::Tensor output_logits(const torch::Tensor& x, const torch::Tensor& projection) {
  if (in_force) return nn::linear(x, in_force->rows_of(projection));
  return nn::linear(x, projection);
}

}  // namespace csan::nn
