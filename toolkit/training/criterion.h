// Training criteria, registered by name ("criterion.name"): they run the model on a
// batch and return the summed loss to back-propagate plus the statistics the trainer
// logs. Sums, not means: the trainer divides gradients by the total sample size of an
// update (over micro-batches and ranks), as fairseq does. A criterion knows the model
// family and the batch fields it reads; a wrong family is a one-line error.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <memory>

#include "toolkit/core/config.h"
#include "toolkit/core/registry.h"
#include "toolkit/models/model.h"
#include "toolkit/training/tensor_batch.h"

namespace csan::training {

struct CriterionOutput {
  torch::Tensor loss;   // scalar sum to back-propagate
  double loss_sum = 0;  // nats
  double nll_sum = 0;   // nats
  int64_t ntokens = 0;
  int64_t nsentences = 0;
  int64_t sample_size = 0;  // what gradients are divided by (target tokens)
};

class Criterion {
 public:
  virtual ~Criterion() = default;
  virtual CriterionOutput compute(models::Model& model, const TensorBatch& batch) = 0;
};

using CriterionFactory = std::function<std::unique_ptr<Criterion>(const core::Config&, int64_t pad_index)>;
core::Registry<CriterionFactory>& criterion_registry();

// Declares "criterion.*" keys.
void declare_criterion_options(core::ConfigSchema& schema);
std::unique_ptr<Criterion> build_criterion(const core::Config& cfg, int64_t pad_index);

// Reported figures, as fairseq logs them: loss and nll in bits per token, ppl = 2^nll.
double base2(double nats_sum, double count);

}  // namespace csan::training
