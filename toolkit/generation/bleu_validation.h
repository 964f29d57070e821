// The trainer's BLEU validation (task.eval_bleu): translates validation batches with the
// model being trained through the same SequenceGenerator and detokenization as
// csan-generate, and scores them as csan-score does with its defaults, so the figure in
// metrics.jsonl is what `csan-generate --data D --gen-subset valid --output-format plain`
// piped into `csan-score` reports for that checkpoint with the same settings.
#pragma once

#include <memory>

#include "toolkit/training/validation_hooks.h"

namespace csan::generation {

// Registers the evaluator with training/ (training::set_bleu_evaluator_factory).
// Executables that train call it once before training.
void register_bleu_validation();

// The evaluator itself (what the registered factory builds).
std::unique_ptr<training::BleuEvaluator> make_bleu_evaluator(const training::BleuContext& context);

}  // namespace csan::generation
