#include "toolkit/nn/output_vocabulary.h"

#include "toolkit/nn/converted_weights.h"

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

}  // namespace csan::nn
