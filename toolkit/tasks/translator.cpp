#include "toolkit/tasks/translator.h"

#include <torch/torch.h>

#include <algorithm>
#include <limits>
#include <optional>

#include "toolkit/checkpoint/checkpoint.h"
#include "toolkit/core/error.h"
#include "toolkit/data/batching.h"
#include "toolkit/generation/ensemble_decoder.h"
#include "toolkit/nn/compute_device.h"
#include "toolkit/nn/compute_threads.h"
#include "toolkit/tasks/multilingual_steering.h"
#include "toolkit/tasks/translation_generate.h"

namespace csan::tasks {

namespace {

void validate(const generation::BatchLimits& limits) {
  if (limits.batch_size < 0 || limits.max_tokens < 0) throw Error("batch_size/max_tokens: must not be negative", ErrorKind::bad_option);
  if (limits.batch_size == 0 && limits.max_tokens == 0)
    throw Error("batch_size 0 (no limit) needs max_tokens > 0: with both unbounded all the input would be one batch", ErrorKind::bad_option);
  if (limits.parallel_batches < 0) throw Error("parallel_batches: must not be negative", ErrorKind::bad_option);
}

}  // namespace

bool TranslateOptions::operator==(const TranslateOptions& o) const {
  return search == o.search && limits == o.limits;
}

// One caller's sentences waiting to be translated (translate() holds it on its stack).
struct Translator::Request {
  const std::vector<generation::SourceSentence>* sentences;
  const TranslateOptions* options;
  std::vector<std::vector<generation::Hypothesis>> hypotheses;
  std::exception_ptr error;
  bool done = false;
};

Translator::Translator(const TranslatorOptions& options, std::ostream& log) {
  if (options.paths.empty()) throw Error("path: no checkpoint given");
  const bool cpu = nn::named_device(options.device).is_cpu();
  generation::validate(options.precision);
  if (options.threads < 0) throw Error("threads: must not be negative (0: leave LibTorch's count as it is)", ErrorKind::bad_option);
  if (options.threads > 0) nn::use_compute_threads(options.threads, "threads");
  checkpoint::CheckpointReader first(options.paths[0]);
  const checkpoint::CheckpointMeta meta = first.meta();
  const bool multilingual = meta.task == kMultilingualTask;
  std::optional<data::LangPair> pair;
  if (multilingual)
    pair = multilingual_pair(meta, options.paths[0], options.source_lang, options.target_lang, "source_lang",
                             "target_lang");
  DecodingModels loaded = load_for_decoding(options.paths, options.precision, cpu, first, log);
  ensemble_ = std::move(loaded.ensemble);
  precision_ = loaded.precision;
  if (pair) steer_to_pair(ensemble_, meta, *pair, options.paths[0]);
  // Any other checkpoint translates its own pair: a language given must be its.
  auto check_own = [&](const char* option, const std::string& given, const std::string& own) {
    if (!given.empty() && given != own)
      throw Error(std::string(option) + ": '" + given + "' but " + options.paths[0] + " translates " +
                      ensemble_.src_lang + " -> " + ensemble_.tgt_lang,
                  ErrorKind::bad_option);
  };
  check_own("source_lang", options.source_lang, ensemble_.src_lang);
  check_own("target_lang", options.target_lang, ensemble_.tgt_lang);
  if (ensemble_.sentencepiece())
    sentencepiece_ = std::make_unique<text::SentencePieceModel>(
        text::SentencePieceModel::from_bytes(ensemble_.spm_model, options.paths[0]));
  source_codec_ = std::make_unique<generation::TextCodec>(ensemble_.src_dict, sentencepiece_.get());
  if (!ensemble_.tgt_spm_model.empty())
    target_sentencepiece_ = std::make_unique<text::SentencePieceModel>(
        text::SentencePieceModel::from_bytes(ensemble_.tgt_spm_model, options.paths[0]));
  target_codec_ = std::make_unique<generation::TextCodec>(
      ensemble_.tgt_dict, target_sentencepiece_ ? target_sentencepiece_.get() : sentencepiece_.get(),
      ensemble_.detokenizer == "marian");
  if (!options.shortlist.empty())
    shortlist_ = std::make_unique<generation::Shortlist>(
        generation::Shortlist::load(options.shortlist, ensemble_.src_dict, ensemble_.tgt_dict));
  max_source_positions_ = max_target_positions_ = std::numeric_limits<int64_t>::max();
  for (const auto& m : ensemble_.models) {
    max_source_positions_ = std::min(max_source_positions_, m->max_source_positions());
    max_target_positions_ = std::min(max_target_positions_, m->max_target_positions());
  }
}

Translator::~Translator() = default;

std::string Translator::device() const { return nn::device_of(*ensemble_.models.front()).str(); }

std::vector<generation::SourceSentence> Translator::encode(const std::vector<std::string>& lines,
                                                           const std::string& origin, int64_t max_length,
                                                           const generation::TextCodec& codec) const {
  std::vector<generation::SourceSentence> sentences(lines.size());
  for (size_t i = 0; i < lines.size(); ++i)
    sentences[i].src = codec.encode(lines[i], origin, static_cast<long>(i + 1), max_length).ids;
  return sentences;
}

std::vector<generation::SourceSentence> Translator::encode_sources(const std::vector<std::string>& lines,
                                                                   const std::string& origin) const {
  // The language token takes one of the positions, as in csan-generate; an empty line
  // stays empty (it translates to nothing).
  auto sentences = encode(lines, origin, max_source_positions_ - (ensemble_.source_prefix >= 0), *source_codec_);
  for (auto& s : sentences) add_source_prefix(s.src, ensemble_.source_prefix);
  return sentences;
}

int64_t Translator::source_tokens(const std::string& line) const {
  return static_cast<int64_t>(encode_sources({line}, "input").front().src.size());
}

std::vector<std::vector<TextHypothesis>> Translator::translate(const std::vector<std::string>& lines,
                                                               const TranslateOptions& options,
                                                               const std::string& origin) {
  generation::validate(options.search);
  validate(options.limits);
  if (options.search.prefix_size > 0) throw Error("prefix_size: needs references, which raw text has none of", ErrorKind::bad_option);
  if (options.search.beam > ensemble_.tgt_dict.size())
    throw Error("beam: " + std::to_string(options.search.beam) + " exceeds the target vocabulary (" +
                std::to_string(ensemble_.tgt_dict.size()) + " types)", ErrorKind::bad_option);
  // Over-long sources are cut to the models' positions, as csan-generate cuts them.
  const auto sentences = encode_sources(lines, origin);

  Request request{&sentences, &options, {}, nullptr, false};
  {
    std::unique_lock<std::mutex> lock(mutex_);
    waiting_.push_back(&request);
    while (!request.done) {
      if (busy_) {
        done_.wait(lock);
      } else {
        serve(lock);
      }
    }
  }
  if (request.error) std::rethrow_exception(request.error);

  std::vector<std::vector<TextHypothesis>> results(lines.size());
  for (size_t i = 0; i < lines.size(); ++i)
    for (auto& h : request.hypotheses[i])
      results[i].push_back(
          TextHypothesis{target_codec_->decode(h.tokens), std::move(h.tokens), h.score, std::move(h.positional_scores)});
  return results;
}

void Translator::serve(std::unique_lock<std::mutex>& lock) {
  busy_ = true;
  // Every waiting request with the first one's options, translated as one input.
  const TranslateOptions options = *waiting_.front()->options;
  std::vector<Request*> served;
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    if (*(*it)->options == options) {
      served.push_back(*it);
      it = waiting_.erase(it);
    } else {
      ++it;
    }
  }
  lock.unlock();
  std::vector<generation::SourceSentence> all;
  for (const Request* r : served) all.insert(all.end(), r->sentences->begin(), r->sentences->end());
  std::exception_ptr error;
  std::vector<std::vector<generation::Hypothesis>> hypotheses;
  try {
    generation::BatchTranslator translator(ensemble_, options.search, options.limits, shortlist_.get());
    hypotheses = translator.translate(all);
  } catch (...) {
    error = std::current_exception();
  }
  lock.lock();
  size_t next = 0;
  for (Request* r : served) {
    const size_t count = r->sentences->size();
    if (error) {
      r->error = error;
    } else {
      r->hypotheses.assign(std::make_move_iterator(hypotheses.begin() + static_cast<std::ptrdiff_t>(next)),
                           std::make_move_iterator(hypotheses.begin() + static_cast<std::ptrdiff_t>(next + count)));
    }
    next += count;
    r->done = true;
  }
  busy_ = false;
  done_.notify_all();
}

std::vector<ForcedScore> Translator::score(const std::vector<std::string>& sources,
                                           const std::vector<std::string>& targets,
                                           const generation::BatchLimits& limits) {
  validate(limits);
  if (sources.size() != targets.size())
    throw Error("score: " + std::to_string(sources.size()) + " sources but " + std::to_string(targets.size()) +
                " targets", ErrorKind::bad_input);
  const auto src = encode_sources(sources, "sources");
  const auto tgt = encode(targets, "targets", 0, *target_codec_);
  std::vector<int32_t> src_sizes(src.size()), tgt_sizes(src.size());
  std::vector<int64_t> order(src.size());
  for (size_t i = 0; i < src.size(); ++i) {
    order[i] = static_cast<int64_t>(i);
    src_sizes[i] = static_cast<int32_t>(src[i].src.size());
    tgt_sizes[i] = static_cast<int32_t>(tgt[i].src.size());
    // The decoder reads </s> and then every target token but the last.
    if (tgt_sizes[i] > max_target_positions_)
      throw Error("targets:" + std::to_string(i + 1) + ": " + std::to_string(tgt_sizes[i]) +
                  " tokens, more than the models' " + std::to_string(max_target_positions_) + " target positions", ErrorKind::bad_input);
  }
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return src_sizes[a] < src_sizes[b]; });
  const auto batches = data::batch_by_size(order, src_sizes, tgt_sizes,
                                           {limits.max_tokens, limits.batch_size > 0 ? limits.batch_size : 0, 1});
  const int64_t pad = ensemble_.tgt_dict.pad();
  // The decoder's first input: a multilingual model's target-language token, else </s>.
  const int64_t start = ensemble_.decoder_start >= 0 ? ensemble_.decoder_start : ensemble_.tgt_dict.eos();
  std::vector<ForcedScore> scores(src.size());
  torch::NoGradGuard no_grad;
  for (const auto& batch : batches) {
    const int64_t rows = static_cast<int64_t>(batch.size());
    int64_t src_width = 0, tgt_width = 0;
    for (int64_t i : batch) {
      src_width = std::max<int64_t>(src_width, src_sizes[i]);
      tgt_width = std::max<int64_t>(tgt_width, tgt_sizes[i]);
    }
    auto src_tokens = torch::full({rows, src_width}, ensemble_.src_dict.pad(), torch::kLong);
    auto src_lengths = torch::empty({rows}, torch::kLong);
    // [start, y_1, ..., y_T]: the decoder's input at step t is this row's first t + 1 tokens.
    auto prefix = torch::full({rows, tgt_width + 1}, pad, torch::kLong);
    for (int64_t r = 0; r < rows; ++r) {
      const auto& s = src[batch[r]].src;
      const auto& t = tgt[batch[r]].src;
      for (size_t k = 0; k < s.size(); ++k) src_tokens[r][static_cast<int64_t>(k)] = s[k];
      src_lengths[r] = static_cast<int64_t>(s.size());
      prefix[r][0] = start;
      for (size_t k = 0; k < t.size(); ++k) prefix[r][static_cast<int64_t>(k) + 1] = t[k];
    }
    generation::EnsembleDecoder decoder(ensemble_.models);
    const torch::Device device = decoder.device();
    prefix = prefix.to(device);
    decoder.start(src_tokens.to(device), src_lengths.to(device), 1, tgt_width + 1);
    std::vector<torch::Tensor> steps;
    for (int64_t t = 0; t < tgt_width; ++t) {
      const torch::Tensor log_probs = decoder.step(prefix.narrow(1, 0, t + 1));
      steps.push_back(log_probs.gather(1, prefix.narrow(1, t + 1, 1)).squeeze(1).to(torch::kFloat));
    }
    const torch::Tensor table = torch::stack(steps, 1).to(torch::kCPU).contiguous();  // [rows, T]
    const auto a = table.accessor<float, 2>();
    for (int64_t r = 0; r < rows; ++r) {
      ForcedScore& out = scores[static_cast<size_t>(batch[r])];
      out.tokens = tgt[batch[r]].src;
      for (int64_t t = 0; t < tgt_sizes[batch[r]]; ++t) {
        out.positional_scores.push_back(a[r][t]);
        out.log_probability += a[r][t];
      }
    }
  }
  return scores;
}

}  // namespace csan::tasks
