// BLEU of a model in training on the validation set (task.eval_bleu), through the same
// generator and scorer as csan-generate. The trainer cannot depend on generation/, so
// the executable that wants it calls install_validation_bleu() once at start-up.
#pragma once

#include "toolkit/training/validation_hooks.h"

namespace csan::generation {

// Beam search with the config's generation.beam / generation.lenpen / generation.max_len_a
// / generation.max_len_b when those keys are declared (defaults 5, 1, 1.2, 10 otherwise),
// detokenized with the SentencePiece model; sacreBLEU's default BLEU. The model is
// left in the training/eval mode it had.
double validation_bleu(models::EncoderDecoderModel& model, const training::BleuContext& context);

// Registers validation_bleu with the trainer.
void install_validation_bleu();

}  // namespace csan::generation
