#include "toolkit/generation/validation_bleu.h"

#include <algorithm>
#include <optional>

#include "toolkit/generation/sequence_generator.h"
#include "toolkit/generation/text_codec.h"
#include "toolkit/scoring/metrics.h"

namespace csan::generation {

namespace {

template <typename T>
T config_or(const core::Config& cfg, const std::string& key, T fallback) {
  return cfg.schema().has(key) && cfg.has(key) ? cfg.get<T>(key) : fallback;
}

std::vector<int64_t> row(const data::TokenMatrix& m, int64_t r, int64_t pad) {
  std::vector<int64_t> out;
  for (int64_t c = 0; c < m.cols && m.values[r * m.cols + c] != pad; ++c) out.push_back(m.values[r * m.cols + c]);
  return out;
}

}  // namespace

double validation_bleu(models::EncoderDecoderModel& model, const training::BleuContext& context) {
  SearchOptions o;
  o.beam = config_or<int64_t>(context.config, "generation.beam", 5);
  o.lenpen = config_or<double>(context.config, "generation.lenpen", 1.0);
  o.max_len_a = config_or<double>(context.config, "generation.max_len_a", 1.2);
  o.max_len_b = config_or<int64_t>(context.config, "generation.max_len_b", 10);
  const bool was_training = model.is_training();
  // Non-owning: the trainer owns the model.
  std::shared_ptr<models::EncoderDecoderModel> view(&model, [](models::EncoderDecoderModel*) {});
  const auto& tgt = context.tgt_dict;
  SequenceGenerator generator({view}, o, SpecialTokens{tgt.bos(), tgt.pad(), tgt.eos(), tgt.unk()});

  std::optional<text::SentencePieceModel> spm;
  if (!context.spm_model.empty()) spm = text::SentencePieceModel::from_bytes(context.spm_model, "checkpoint");
  const TextCodec codec(tgt, spm ? &*spm : nullptr);

  const int64_t n = static_cast<int64_t>(context.valid.size());
  std::vector<int64_t> order(n);
  for (int64_t i = 0; i < n; ++i) order[i] = i;
  const auto& sizes = context.valid.src_sizes();
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return sizes[a] < sizes[b]; });
  std::vector<std::string> hyps(n), refs(n);
  constexpr int64_t kBatch = 64;
  for (int64_t start = 0; start < n; start += kBatch) {
    data::Batch batch(order.begin() + start, order.begin() + std::min(n, start + kBatch));
    const data::CollatedBatch c = context.valid.collate(batch);
    auto src = torch::from_blob(const_cast<int64_t*>(c.src_tokens.values.data()), {c.src_tokens.rows, c.src_tokens.cols},
                                torch::kLong)
                   .clone();
    auto lengths = torch::tensor(c.src_lengths, torch::kLong);
    auto results = generator.generate(src, lengths);
    for (int64_t b = 0; b < c.nsentences(); ++b) {
      const int64_t id = c.ids[b];
      hyps[id] = results[b].empty() ? std::string() : codec.decode(results[b][0].tokens);
      refs[id] = codec.decode(row(c.target, b, tgt.pad()));
    }
  }
  model.train(was_training);
  auto bleu = scoring::make_bleu({});
  scoring::Stats sum;
  for (const auto& stats : bleu->segment_stats(hyps, {refs})) {
    if (sum.empty()) sum.assign(stats.size(), 0.0);
    for (size_t j = 0; j < stats.size(); ++j) sum[j] += stats[j];
  }
  return n == 0 ? 0.0 : bleu->score(sum);
}

void install_validation_bleu() { training::set_bleu_evaluator(validation_bleu); }

}  // namespace csan::generation
