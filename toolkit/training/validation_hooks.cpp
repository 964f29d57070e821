#include "toolkit/training/validation_hooks.h"

namespace csan::training {

namespace {
BleuEvaluator& slot() {
  static BleuEvaluator evaluator;
  return evaluator;
}
}  // namespace

void set_bleu_evaluator(BleuEvaluator evaluator) { slot() = std::move(evaluator); }
const BleuEvaluator& bleu_evaluator() { return slot(); }

}  // namespace csan::training
