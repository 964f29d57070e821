// Validation metrics other than the loss. BLEU needs the sequence generator, which
// lives in generation/ (it depends on models, not on training): it registers an
// evaluator here and the training loop calls it when task.eval_bleu is set. Until one
// is registered, eval_bleu is a clear error at start-up rather than a silent no-op.
#pragma once

#include <functional>

#include "toolkit/core/config.h"
#include "toolkit/data/language_pair_dataset.h"
#include "toolkit/models/encoder_decoder_model.h"
#include "toolkit/text/dictionary.h"

namespace csan::training {

struct BleuContext {
  const core::Config& config;  // generation.* keys (beam, lenpen, ...) live here
  const data::LanguagePairDataset& valid;
  const text::Dictionary& src_dict;
  const text::Dictionary& tgt_dict;
  const std::string& spm_model;  // bytes, for detokenization
};

// Returns corpus BLEU of the model's translations of the validation set.
using BleuEvaluator = std::function<double(models::EncoderDecoderModel&, const BleuContext&)>;

void set_bleu_evaluator(BleuEvaluator evaluator);
const BleuEvaluator& bleu_evaluator();  // empty until set

}  // namespace csan::training
