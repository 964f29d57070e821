// BLEU validation (fairseq's --eval-bleu, the translation task's validation metric):
// translates validation batches with the model being trained through the same
// SequenceGenerator and detokenization as csan-generate, and scores them as csan-score
// does with its defaults, so the figure in metrics.jsonl is what `csan-generate --data D
// --gen-subset valid --output-format plain` piped into `csan-score` reports for that
// checkpoint with the same settings.
//
// BLEU is scoring::Bleu's, from sufficient statistics, so that data-parallel ranks can each
// translate their shard of the validation batches and sum: statistics() returns the
// statistics of a shard, score() the BLEU of summed statistics.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "toolkit/core/option_table.h"
#include "toolkit/data/batching.h"
#include "toolkit/data/language_pair_dataset.h"
#include "toolkit/generation/search_options.h"
#include "toolkit/models/encoder_decoder_model.h"
#include "toolkit/scoring/bleu.h"
#include "toolkit/text/dictionary.h"
#include "toolkit/text/sentencepiece.h"

namespace csan::generation {

class TextCodec;

// The task.eval_bleu_* keys. The generation settings mirror csan-generate's flags of the
// same names (and its defaults), so a validation BLEU can be reproduced with
// csan-generate + csan-score.
struct BleuValidationOptions {
  int64_t beam = 5;
  double lenpen = 1.0;
  double max_len_a = 0.0;
  int64_t max_len_b = 200;
  int64_t min_len = 1;
  double unkpen = 0.0;
  int64_t no_repeat_ngram_size = 0;
  std::string detok = "spm";
  std::string tokenize = "13a";
  bool print_samples = false;

  SearchOptions search() const;
};
const core::OptionTable<BleuValidationOptions>& bleu_validation_option_table();

class BleuValidation {
 public:
  // Keeps references to `valid` and `tgt_dict` for its lifetime. `log` prints sample
  // translations (print_samples). Throws csan::Error naming the key for bad settings.
  BleuValidation(const BleuValidationOptions& options, const data::LanguagePairDataset& valid,
                 const text::Dictionary& tgt_dict, const std::string& spm_model,
                 std::function<void(const std::string&)> log);
  ~BleuValidation();

  // Translates `batches` (this rank's shard of the validation batches) with `model` and
  // returns their summed BLEU statistics: [hyp_len, ref_len, matches_1..4, totals_1..4],
  // sacreBLEU's layout. Sums over ranks are the corpus statistics.
  std::vector<double> statistics(models::EncoderDecoderModel& model, const std::vector<data::Batch>& batches);
  // Corpus BLEU of summed statistics (sacreBLEU's default exponential smoothing).
  double score(const std::vector<double>& sums) const { return bleu_.score(sums); }

 private:
  const data::LanguagePairDataset& valid_;
  const text::Dictionary& tgt_dict_;
  BleuValidationOptions options_;
  SearchOptions search_;
  scoring::Bleu bleu_;
  std::function<void(const std::string&)> log_;
  std::unique_ptr<text::SentencePieceModel> spm_;
  std::unique_ptr<TextCodec> codec_;
};

}  // namespace csan::generation
