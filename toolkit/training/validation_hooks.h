// Validation metrics other than the loss. BLEU needs the sequence generator, which
// lives in generation/ (it depends on training, not the other way round): generation/
// registers a factory here (generation::register_bleu_validation(), called by csan-train)
// and the training loop builds one evaluator per run when task.eval_bleu is set. Without
// a registered factory, eval_bleu is a clear error at start-up rather than a silent no-op.
//
// BLEU is computed from sufficient statistics so that data-parallel ranks can each
// translate their shard of the validation batches and sum: the evaluator returns the
// statistics of its shard, the loop sums them over ranks (GradientSync::all_reduce_sums)
// and asks the evaluator for the score of the sums.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "toolkit/core/config.h"
#include "toolkit/data/batching.h"
#include "toolkit/data/language_pair_dataset.h"
#include "toolkit/models/encoder_decoder_model.h"
#include "toolkit/text/dictionary.h"

namespace csan::training {

// Everything an evaluator may keep references to for the whole run.
struct BleuContext {
  const core::Config& config;  // task.eval_bleu_* keys
  const data::LanguagePairDataset& valid;
  const text::Dictionary& src_dict;
  const text::Dictionary& tgt_dict;
  const std::string& spm_model;  // SentencePiece model bytes ("" if the data has none)
  // Where sample translations go (task.eval_bleu_print_samples); a no-op off rank 0.
  std::function<void(const std::string&)> log;
};

class BleuEvaluator {
 public:
  virtual ~BleuEvaluator() = default;
  // Translates `batches` (this rank's shard of the validation batches) with `model` and
  // returns their summed BLEU statistics: [hyp_len, ref_len, matches_1..4, totals_1..4],
  // sacreBLEU's layout. Sums over ranks are the corpus statistics.
  virtual std::vector<double> statistics(models::EncoderDecoderModel& model,
                                         const std::vector<data::Batch>& batches) = 0;
  // Corpus BLEU of summed statistics (sacreBLEU's default exponential smoothing).
  virtual double score(const std::vector<double>& sums) const = 0;
};

// Builds the evaluator once per run; throws csan::Error naming the key for bad settings.
using BleuEvaluatorFactory = std::function<std::unique_ptr<BleuEvaluator>(const BleuContext&)>;

void set_bleu_evaluator_factory(BleuEvaluatorFactory factory);
const BleuEvaluatorFactory& bleu_evaluator_factory();  // empty until set

// The task.eval_bleu_* keys (declared with the training keys, so that checkpoints, whose
// embedded recipe contains them, load anywhere the training schema does).
void declare_bleu_validation_options(core::ConfigSchema& schema);

}  // namespace csan::training
