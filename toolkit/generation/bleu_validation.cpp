#include "toolkit/generation/bleu_validation.h"

#include <algorithm>

#include "toolkit/generation/sequence_generator.h"
#include "toolkit/generation/text_codec.h"
#include "toolkit/scoring/resampling.h"

namespace csan::generation {

const core::OptionTable<BleuValidationOptions>& bleu_validation_option_table() {
  using O = BleuValidationOptions;
  static const auto table =
      core::OptionTable<O>()
          .add("task.eval_bleu_beam", &O::beam, "BLEU validation: beam size (csan-generate --beam)", 1)
          .add("task.eval_bleu_lenpen", &O::lenpen, "BLEU validation: length penalty (--lenpen)")
          .add("task.eval_bleu_max_len_a", &O::max_len_a,
               "BLEU validation: max length a * source length + b (--max-len-a)", 0.0)
          .add("task.eval_bleu_max_len_b", &O::max_len_b,
               "BLEU validation: max length a * source length + b (--max-len-b)", 1)
          .add("task.eval_bleu_min_len", &O::min_len, "BLEU validation: minimum output length (--min-len)", 1)
          .add("task.eval_bleu_unkpen", &O::unkpen, "BLEU validation: <unk> penalty (--unkpen)")
          .add("task.eval_bleu_no_repeat_ngram_size", &O::no_repeat_ngram_size,
               "BLEU validation: block repeated n-grams (--no-repeat-ngram-size)", 0)
          .add("task.eval_bleu_detok", &O::detok,
               "BLEU validation: detokenize with the data's SentencePiece model (spm; plain symbols for data "
               "without one) or score the dictionary symbols as they are (none)",
               {"spm", "none"})
          .add("task.eval_bleu_tokenize", &O::tokenize, "BLEU validation: sacreBLEU tokenizer (none: tokenized BLEU)",
               {"13a", "intl", "zh", "none"})
          .add("task.eval_bleu_print_samples", &O::print_samples,
               "BLEU validation: log one hypothesis and its reference");
  return table;
}

namespace {

// csan-score's defaults but the tokenizer.
scoring::BleuOptions bleu_options(const BleuValidationOptions& options) {
  scoring::BleuOptions bleu;
  bleu.tokenize = options.tokenize;
  return bleu;
}

}  // namespace

SearchOptions BleuValidationOptions::search() const {
  SearchOptions o;
  o.beam = beam;
  o.nbest = 1;
  o.lenpen = lenpen;
  o.max_len_a = max_len_a;
  o.max_len_b = max_len_b;
  o.min_len = min_len;
  o.unkpen = unkpen;
  o.no_repeat_ngram_size = no_repeat_ngram_size;
  return o;
}

BleuValidation::BleuValidation(const BleuValidationOptions& options, const data::LanguagePairDataset& valid,
                               const text::Dictionary& tgt_dict, const std::string& spm_model,
                               std::function<void(const std::string&)> log)
    : valid_(valid),
      tgt_dict_(tgt_dict),
      options_(options),
      search_(options.search()),
      bleu_(bleu_options(options)),
      log_(std::move(log)) {
  validate(search_);
  // Like csan-generate: the data's model detokenizes (detok spm); otherwise the symbols
  // are scored as they are.
  if (!spm_model.empty() && options.detok == "spm")
    spm_ = std::make_unique<text::SentencePieceModel>(
        text::SentencePieceModel::from_bytes(spm_model, "the data's spm.model"));
  codec_ = std::make_unique<TextCodec>(tgt_dict_, spm_.get());
}

BleuValidation::~BleuValidation() = default;

std::vector<double> BleuValidation::statistics(models::EncoderDecoderModel& model,
                                               const std::vector<data::Batch>& batches) {
  // The trainer owns the model; the generator only borrows it for this call.
  std::shared_ptr<models::EncoderDecoderModel> borrowed(&model, [](models::EncoderDecoderModel*) {});
  const int64_t pad = tgt_dict_.pad(), eos = tgt_dict_.eos();
  // A multilingual model's target-language token starts the decoder as in training.
  const int64_t start = valid_.decoder_start();
  SequenceGenerator generator(
      {borrowed}, search_,
      SpecialTokens{tgt_dict_.bos(), pad, eos, tgt_dict_.unk(), start == eos || start == pad ? -1 : start});
  const int64_t max_source = model.max_source_positions();
  std::vector<std::string> hypotheses, references;  // of the whole shard, in batch order
  for (const auto& batch : batches) {
    if (batch.empty()) continue;  // a short shard's padding batch
    const data::CollatedBatch collated = valid_.collate(batch);
    // Empty sources translate to empty output, as in csan-generate.
    std::vector<int64_t> rows;
    std::vector<std::vector<int64_t>> sources;
    for (int64_t r = 0; r < collated.nsentences(); ++r) {
      auto src = collated.src_tokens.row_before_pad(r, pad);
      truncate_source(src, max_source, eos);
      if (src.size() > 1) {
        rows.push_back(r);
        sources.push_back(std::move(src));
      }
    }
    const size_t first = hypotheses.size();
    hypotheses.resize(first + static_cast<size_t>(collated.nsentences()));
    if (!rows.empty()) {
      int64_t width = 0;
      for (const auto& s : sources) width = std::max<int64_t>(width, static_cast<int64_t>(s.size()));
      auto src_tokens = torch::full({static_cast<int64_t>(rows.size()), width}, pad, torch::kLong);
      auto lengths = torch::empty({static_cast<int64_t>(rows.size())}, torch::kLong);
      for (size_t i = 0; i < sources.size(); ++i) {
        const auto n = static_cast<int64_t>(sources[i].size());
        src_tokens[static_cast<int64_t>(i)].narrow(0, 0, n).copy_(torch::tensor(sources[i], torch::kLong));
        lengths[static_cast<int64_t>(i)] = n;
      }
      const auto hyps = generator.generate(src_tokens, lengths);
      for (size_t i = 0; i < rows.size(); ++i)
        if (!hyps[i].empty()) hypotheses[first + static_cast<size_t>(rows[i])] = codec_->decode(hyps[i][0].tokens);
    }
    for (int64_t r = 0; r < collated.nsentences(); ++r)
      references.push_back(codec_->decode(collated.target.row_before_pad(r, pad)));
  }
  if (options_.print_samples && !hypotheses.empty()) {
    log_("example hypothesis: " + hypotheses[0]);
    log_("example reference: " + references[0]);
  }
  if (hypotheses.empty()) return std::vector<double>(2 + 2 * scoring::kBleuMaxOrder, 0.0);
  return scoring::sum_stats(bleu_.segment_stats(hypotheses, {references}));
}

}  // namespace csan::generation
