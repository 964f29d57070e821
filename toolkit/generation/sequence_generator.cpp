#include "toolkit/generation/sequence_generator.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "toolkit/core/error.h"

namespace csan::generation {

namespace {

int64_t min_target_positions(const std::vector<std::shared_ptr<models::EncoderDecoderModel>>& models) {
  int64_t positions = std::numeric_limits<int64_t>::max();
  for (const auto& m : models) positions = std::min(positions, m->max_target_positions());
  return positions;
}

double worst_score(const std::vector<Hypothesis>& done) {
  double worst = std::numeric_limits<double>::infinity();
  for (const auto& hyp : done) worst = std::min(worst, hyp.score);
  return worst;
}

// Removes the lowest-scoring hypothesis (the first of equals, as transformers' BeamHypotheses).
void drop_worst(std::vector<Hypothesis>& done) {
  done.erase(std::min_element(done.begin(), done.end(),
                              [](const Hypothesis& a, const Hypothesis& b) { return a.score < b.score; }));
}

// The best sum among sentence i's candidates (transformers' best_sum_logprobs).
double best_candidate(const at::TensorAccessor<double, 3>& h, int64_t i, int64_t width) {
  double best = -std::numeric_limits<double>::infinity();
  for (int64_t c = 0; c < width; ++c) best = std::max(best, h[0][i][c]);
  return best;
}

int64_t start_token(const std::vector<std::shared_ptr<models::EncoderDecoderModel>>& models,
                    const SpecialTokens& special) {
  if (special.decoder_start >= 0) return special.decoder_start;
  const bool pad = !models.empty() && models.front()->decoder_starts_with_pad();
  for (const auto& m : models)
    if (m->decoder_starts_with_pad() != pad)
      throw Error("ensemble: the models start their decoders from different tokens (model.decoder_start)",
                  ErrorKind::bad_option);
  return pad ? special.pad : special.eos;
}

}  // namespace

// transformers' ForcedEOSTokenLogitsProcessor: at the length limit </s> gets log-probability 0
// (MaxLength already made every other token impossible).
void SequenceGenerator::force_eos_scores_zero(StepScores& scores, int64_t step,
                                              const std::vector<int64_t>& row_max_len) const {
  const int64_t column = columns_.of(special_.eos);
  if (column < 0) return;
  std::vector<uint8_t> at_end(row_max_len.size());
  bool any = false;
  for (size_t r = 0; r < row_max_len.size(); ++r) any |= (at_end[r] = step >= row_max_len[r]);
  if (!any) return;
  const torch::Tensor rows =
      torch::tensor(std::vector<int64_t>(at_end.begin(), at_end.end())).to(scores.scores.device()).to(torch::kBool);
  torch::Tensor eos = scores.scores.select(1, column);
  eos.copy_(torch::where(rows, scores.normalizer.to(eos.scalar_type()), eos));
}

SequenceGenerator::SequenceGenerator(std::vector<std::shared_ptr<models::EncoderDecoderModel>> models,
                                     const SearchOptions& options, const SpecialTokens& special)
    : decoder_((validate(options), models), options.temperature),
      options_(options),
      special_(special),
      start_token_(start_token(models, special)),
      processors_(make_processors(options, special)),
      search_(make_search(options)),
      max_target_positions_(min_target_positions(models)) {}

int64_t max_output_length(const SearchOptions& options, int64_t src_length, int64_t max_target_positions) {
  const auto by_source = static_cast<int64_t>(options.max_len_a * static_cast<double>(src_length)) + options.max_len_b;
  // The decoder sees the leading </s> plus every token: at most max_target_positions.
  return std::max<int64_t>(0, std::min(by_source, max_target_positions - 1));
}

std::vector<std::vector<Hypothesis>> SequenceGenerator::generate(const torch::Tensor& src_tokens_anywhere,
                                                                 const torch::Tensor& src_lengths_anywhere,
                                                                 const torch::Tensor& forced_prefix,
                                                                 const std::vector<Constraints>* constraints) {
  torch::NoGradGuard no_grad;
  // Batches are collated on the CPU; the search runs where the models are.
  const auto device = decoder_.device();
  const torch::Tensor src_tokens = src_tokens_anywhere.to(device), src_lengths = src_lengths_anywhere.to(device);
  const int64_t batch = src_tokens.size(0), k = options_.beam;
  const auto long_opts = torch::dtype(torch::kLong).device(device);
  const double neg_inf = -std::numeric_limits<double>::infinity();
  std::vector<std::vector<Hypothesis>> finalized(batch);
  if (batch == 0) return finalized;

  const torch::Tensor lengths_host = src_lengths.to(torch::kCPU).to(torch::kLong);
  std::vector<int64_t> sentence_max_len(batch);
  int64_t longest = 0;
  for (int64_t s = 0; s < batch; ++s)
    longest = std::max(longest, sentence_max_len[s] = max_length(lengths_host[s].item<int64_t>()));

  decoder_.request_attention(options_.attention ? std::optional<int64_t>(options_.alignment_layer) : std::nullopt);
  decoder_.start(src_tokens, src_lengths, k, longest + 1);
  // Rows are sentence-major: row i * k + b is beam b of the i-th sentence still searched.
  torch::Tensor tokens = torch::full({batch * k, longest + 2}, special_.pad, long_opts);
  tokens.select(1, 0).fill_(start_token_);
  torch::Tensor positional = torch::zeros({batch * k, longest + 1}, torch::dtype(torch::kFloat).device(device));
  torch::Tensor cumulative = torch::zeros({batch, k}, torch::dtype(torch::kFloat).device(device));
  // Alignments: each row's attention over the source at each step, reordered with the beams.
  torch::Tensor attention =
      options_.attention
          ? torch::zeros({batch * k, longest + 1, src_tokens.size(1)}, torch::dtype(torch::kFloat).device(device))
          : torch::Tensor();
  const torch::Tensor expand = torch::arange(batch, long_opts).repeat_interleave(k);
  torch::Tensor forced = forced_prefix.defined() && forced_prefix.size(1) > 0
                             ? forced_prefix.to(device).index_select(0, expand)
                             : torch::Tensor();
  std::vector<int64_t> sentences(batch);  // original index of each sentence still searched
  std::vector<int64_t> row_max_len(batch * k);
  for (int64_t s = 0; s < batch; ++s) {
    sentences[s] = s;
    for (int64_t b = 0; b < k; ++b) row_max_len[s * k + b] = sentence_max_len[s];
  }

  if (constraints && static_cast<int64_t>(constraints->size()) != batch)
    throw Error("generation: " + std::to_string(constraints->size()) + " constraint lists for " +
                std::to_string(batch) + " sentences");
  search_->begin({constraints, k, row_max_len, column_ids_, special_.eos});

  for (int64_t step = 0; !sentences.empty(); ++step) {
    const auto n = static_cast<int64_t>(sentences.size());
    const torch::Tensor prefix = tokens.narrow(1, 0, step + 1);
    StepScores step_scores = decoder_.step_scores(prefix);
    if (attention.defined()) attention.select(1, step).copy_(step_scores.attention);
    const int64_t vocab = step_scores.scores.size(1);
    // The processors only forbid or penalize tokens, which commutes with normalizing.
    StepContext context{step, prefix, &row_max_len, forced, &columns_};
    for (const auto& processor : processors_) processor->apply(step_scores.scores, context);
    if (options_.transformers_rules) force_eos_scores_zero(step_scores, step, row_max_len);

    Candidates cand =
        search_->step(step, step_scores.scores.view({n, k, vocab}), step_scores.normalizer.view({n, k}), cumulative);
    // A shortlist's columns back to target ids (a -inf candidate's column may be anything).
    if (step_scores.ids.defined())
      cand.tokens = step_scores.ids.index_select(0, cand.tokens.reshape({-1}).clamp(0, vocab - 1)).view_as(cand.tokens);
    const int64_t width = cand.tokens.size(1);
    torch::Tensor rows = cand.beams + torch::arange(n, long_opts).mul_(k).unsqueeze(1);
    // One small transfer per step: the candidates' scores, tokens, rows and log-probabilities.
    const torch::Tensor host = torch::stack({cand.scores.to(torch::kDouble), cand.tokens.to(torch::kDouble),
                                             rows.to(torch::kDouble), cand.token_lprobs.to(torch::kDouble)})
                                   .to(torch::kCPU);
    const auto h = host.accessor<double, 3>();

    torch::Tensor tokens_host, positional_host, attention_host;  // copied only when a hypothesis ends
    std::vector<int64_t> new_order, new_tokens, kept_sentences, kept_positions, new_row_max_len;
    std::vector<float> new_cumulative, new_lprobs;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t s = sentences[i];
      auto& done = finalized[s];
      int64_t selected = 0;
      for (int64_t c = 0; c < width; ++c) {
        const double score = h[0][i][c];
        if (!std::isfinite(score)) continue;
        const auto token = static_cast<int64_t>(h[1][i][c]);
        const auto row = static_cast<int64_t>(h[2][i][c]);
        if (token == special_.eos) {
          // Only an </s> among the k best ends a hypothesis (fairseq's and transformers' rule);
          // fairseq keeps the first k, transformers the k best.
          if (c >= k) continue;
          const double normalized = score / std::pow(static_cast<double>(step + 1), options_.lenpen);
          if (static_cast<int64_t>(done.size()) >= k &&
              (!options_.transformers_rules || normalized <= worst_score(done)))
            continue;
          if (!tokens_host.defined()) {
            tokens_host = tokens.narrow(1, 1, step).to(torch::kCPU).contiguous();
            positional_host = positional.narrow(1, 0, step).to(torch::kCPU).contiguous();
            if (attention.defined()) attention_host = attention.narrow(1, 0, step + 1).to(torch::kCPU).contiguous();
          }
          Hypothesis hyp;
          const int64_t* t = tokens_host.data_ptr<int64_t>() + row * step;
          const float* p = positional_host.data_ptr<float>() + row * step;
          hyp.tokens.assign(t, t + step);
          hyp.tokens.push_back(special_.eos);
          hyp.positional_scores.assign(p, p + step);
          hyp.positional_scores.push_back(static_cast<float>(h[3][i][c]));
          hyp.score = normalized;
          if (attention_host.defined()) {
            hyp.source_length = lengths_host[s].item<int64_t>();
            const torch::Tensor rows = attention_host.select(0, row).narrow(1, 0, hyp.source_length).contiguous();
            hyp.attention.assign(rows.data_ptr<float>(), rows.data_ptr<float>() + rows.numel());
          }
          if (static_cast<int64_t>(done.size()) >= k) drop_worst(done);
          done.push_back(std::move(hyp));
          continue;
        }
        if (selected == k) continue;
        new_order.push_back(row);
        new_tokens.push_back(token);
        new_cumulative.push_back(static_cast<float>(score));
        new_lprobs.push_back(static_cast<float>(h[3][i][c]));
        ++selected;
      }
      const bool enough =
          static_cast<int64_t>(done.size()) >= k &&
          (!options_.transformers_rules ||
           worst_score(done) >= best_candidate(h, i, width) / std::pow(static_cast<double>(step + 1), options_.lenpen));
      const bool over = enough || step >= sentence_max_len[s] || selected == 0;
      if (over) {
        new_order.resize(new_order.size() - selected), new_tokens.resize(new_tokens.size() - selected);
        new_cumulative.resize(new_cumulative.size() - selected), new_lprobs.resize(new_lprobs.size() - selected);
        continue;
      }
      for (; selected < k; ++selected) {  // fewer live extensions than beams: dead rows
        new_order.push_back(i * k);
        new_tokens.push_back(special_.eos);
        new_cumulative.push_back(static_cast<float>(neg_inf));
        new_lprobs.push_back(0);
      }
      kept_sentences.push_back(s);
      kept_positions.push_back(i);
      for (int64_t b = 0; b < k; ++b) new_row_max_len.push_back(sentence_max_len[s]);
    }
    if (kept_sentences.empty()) break;
    search_->advance(new_order, new_tokens);

    const bool shrank = static_cast<int64_t>(kept_sentences.size()) < n;
    bool same_rows = !shrank;  // greedy search mostly keeps every row where it is
    for (size_t r = 0; same_rows && r < new_order.size(); ++r) same_rows = new_order[r] == static_cast<int64_t>(r);
    if (!same_rows) {
      const torch::Tensor order = torch::tensor(new_order, torch::kLong).to(device);
      tokens = tokens.index_select(0, order);
      positional = positional.index_select(0, order);
      if (attention.defined()) attention = attention.index_select(0, order);
      if (forced.defined()) forced = forced.index_select(0, order);
      decoder_.reorder(order, shrank ? torch::tensor(kept_positions, torch::kLong).to(device) : torch::Tensor());
    }
    tokens.select(1, step + 1).copy_(torch::tensor(new_tokens, torch::kLong));
    positional.select(1, step).copy_(torch::tensor(new_lprobs, torch::kFloat));
    cumulative = torch::tensor(new_cumulative, torch::kFloat).to(device).view({-1, k});
    sentences = std::move(kept_sentences);
    row_max_len = std::move(new_row_max_len);
  }

  for (auto& hyps : finalized) {
    std::stable_sort(hyps.begin(), hyps.end(),
                     [](const Hypothesis& a, const Hypothesis& b) { return a.score > b.score; });
    if (static_cast<int64_t>(hyps.size()) > options_.nbest) hyps.resize(options_.nbest);
  }
  return finalized;
}

}  // namespace csan::generation
