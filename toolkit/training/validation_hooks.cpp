#include "toolkit/training/validation_hooks.h"

namespace csan::training {

namespace {
BleuEvaluatorFactory& slot() {
  static BleuEvaluatorFactory factory;
  return factory;
}
}  // namespace

void set_bleu_evaluator_factory(BleuEvaluatorFactory factory) { slot() = std::move(factory); }
const BleuEvaluatorFactory& bleu_evaluator_factory() { return slot(); }

// The generation settings mirror csan-generate's flags of the same names (and its
// defaults), so a validation BLEU can be reproduced with csan-generate + csan-score.
void declare_bleu_validation_options(core::ConfigSchema& s) {
  s.add_int("task.eval_bleu_beam", 5, "BLEU validation: beam size (csan-generate --beam)", 1);
  s.add_double("task.eval_bleu_lenpen", 1.0, "BLEU validation: length penalty (--lenpen)");
  s.add_double("task.eval_bleu_max_len_a", 0.0, "BLEU validation: max length a * source length + b (--max-len-a)",
               0.0);
  s.add_int("task.eval_bleu_max_len_b", 200, "BLEU validation: max length a * source length + b (--max-len-b)", 1);
  s.add_int("task.eval_bleu_min_len", 1, "BLEU validation: minimum output length (--min-len)", 1);
  s.add_double("task.eval_bleu_unkpen", 0.0, "BLEU validation: <unk> penalty (--unkpen)");
  s.add_int("task.eval_bleu_no_repeat_ngram_size", 0, "BLEU validation: block repeated n-grams (--no-repeat-ngram-size)",
            0);
  s.add_string("task.eval_bleu_detok", "spm",
               "BLEU validation: detokenize with the data's SentencePiece model (spm; plain symbols for data "
               "without one) or score the dictionary symbols as they are (none)",
               {"spm", "none"});
  s.add_string("task.eval_bleu_tokenize", "13a", "BLEU validation: sacreBLEU tokenizer (none: tokenized BLEU)",
               {"13a", "intl", "zh", "none"});
  s.add_bool("task.eval_bleu_print_samples", false, "BLEU validation: log one hypothesis and its reference");
}

}  // namespace csan::training
