#include "toolkit/generation/bleu_validation.h"

#include <algorithm>

#include "toolkit/core/error.h"
#include "toolkit/generation/bleu_validation_statistics.h"
#include "toolkit/generation/isolated_sentencepiece.h"
#include "toolkit/generation/sequence_generator.h"
#include "toolkit/generation/text_codec.h"

namespace csan::generation {

namespace {

SearchOptions search_options(const core::Config& cfg) {
  SearchOptions o;
  o.beam = cfg.get<int64_t>("task.eval_bleu_beam");
  o.nbest = 1;
  o.lenpen = cfg.get<double>("task.eval_bleu_lenpen");
  o.max_len_a = cfg.get<double>("task.eval_bleu_max_len_a");
  o.max_len_b = cfg.get<int64_t>("task.eval_bleu_max_len_b");
  o.min_len = cfg.get<int64_t>("task.eval_bleu_min_len");
  o.unkpen = cfg.get<double>("task.eval_bleu_unkpen");
  o.no_repeat_ngram_size = cfg.get<int64_t>("task.eval_bleu_no_repeat_ngram_size");
  return o;
}

class SearchBleuEvaluator : public training::BleuEvaluator {
 public:
  explicit SearchBleuEvaluator(const training::BleuContext& context)
      : valid_(context.valid),
        tgt_dict_(context.tgt_dict),
        search_(search_options(context.config)),
        statistics_(context.config.get<std::string>("task.eval_bleu_tokenize")),
        print_samples_(context.config.get<bool>("task.eval_bleu_print_samples")),
        log_(context.log) {
    validate(search_);
    const bool sentencepiece = !context.spm_model.empty();
    const bool detokenize = context.config.get<std::string>("task.eval_bleu_detok") == "spm";
    // Like csan-generate on binarized data: the data's model detokenizes when the module
    // loads; otherwise pieces are joined directly (the same text for ordinary pieces).
    if (sentencepiece && detokenize) {
      try {
        spm_ = std::make_unique<IsolatedSentencePiece>(context.spm_model, "the data's spm.model");
      } catch (const Error& e) {
        log_(std::string("warning: BLEU validation: ") + e.what() + "; detokenizing by joining pieces");
      }
    }
    codec_ = std::make_unique<TextCodec>(tgt_dict_, sentencepiece && detokenize, spm_.get());
  }

  std::vector<double> statistics(models::EncoderDecoderModel& model,
                                 const std::vector<data::Batch>& batches) override {
    // The trainer owns the model; the generator only borrows it for this call.
    std::shared_ptr<models::EncoderDecoderModel> borrowed(&model, [](models::EncoderDecoderModel*) {});
    SequenceGenerator generator({borrowed}, search_,
                                SpecialTokens{tgt_dict_.bos(), tgt_dict_.pad(), tgt_dict_.eos(), tgt_dict_.unk()});
    const int64_t pad = tgt_dict_.pad(), eos = tgt_dict_.eos();
    const int64_t max_source = model.max_source_positions();
    std::vector<double> sums(kBleuStatisticsSize, 0.0);
    bool sample_printed = false;
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
      std::vector<std::string> hypotheses(collated.nsentences());
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
          if (!hyps[i].empty()) hypotheses[rows[i]] = codec_->decode(hyps[i][0].tokens);
      }
      for (int64_t r = 0; r < collated.nsentences(); ++r) {
        const std::string reference = codec_->decode(collated.target.row_before_pad(r, pad));
        statistics_.add(hypotheses[r], reference, sums);
        if (print_samples_ && !sample_printed) {
          log_("example hypothesis: " + hypotheses[r]);
          log_("example reference: " + reference);
          sample_printed = true;
        }
      }
    }
    return sums;
  }

  double score(const std::vector<double>& sums) const override { return bleu_from_statistics(sums); }

 private:
  const data::LanguagePairDataset& valid_;
  const text::Dictionary& tgt_dict_;
  SearchOptions search_;
  BleuStatistics statistics_;
  bool print_samples_;
  std::function<void(const std::string&)> log_;
  std::unique_ptr<IsolatedSentencePiece> spm_;
  std::unique_ptr<TextCodec> codec_;
};

}  // namespace

std::unique_ptr<training::BleuEvaluator> make_bleu_evaluator(const training::BleuContext& context) {
  return std::make_unique<SearchBleuEvaluator>(context);
}

void register_bleu_validation() { training::set_bleu_evaluator_factory(make_bleu_evaluator); }

}  // namespace csan::generation
