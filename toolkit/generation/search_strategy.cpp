#include "toolkit/generation/search_strategy.h"

#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "toolkit/generation/vocab_kernels.h"

namespace csan::generation {

Candidates BeamSearch::step(int64_t step, const torch::Tensor& scores, const torch::Tensor& normalizer,
                            const torch::Tensor& cumulative) {
  return best_extensions(scores, normalizer, cumulative, 2 * scores.size(1), step == 0);
}

Sampling::Sampling(int64_t topk, double topp, uint64_t seed)
    : topk_(topk), topp_(topp), generator_(at::make_generator<at::CPUGeneratorImpl>(seed)) {}

void Sampling::reseed(uint64_t seed) { generator_.set_current_seed(seed); }

torch::Tensor Sampling::draw(const torch::Tensor& probs, int64_t count) {
  // A row with nothing allowed (every token forbidden) would make multinomial throw;
  // such a row's draw is ignored anyway (its score is -inf).
  torch::Tensor safe = probs.clone();
  safe.select(1, 0).add_(safe.sum(1).eq(0).to(safe.scalar_type()));
  return torch::multinomial(safe, count, /*replacement=*/true, generator_);
}

Candidates Sampling::step(int64_t step, const torch::Tensor& scores, const torch::Tensor& normalizer,
                          const torch::Tensor& cumulative) {
  const torch::Tensor lprobs_in = scores - normalizer.unsqueeze(2);
  const int64_t n = lprobs_in.size(0), k = lprobs_in.size(1), v = lprobs_in.size(2);
  torch::Tensor lprobs = (step == 0 ? lprobs_in.narrow(1, 0, 1) : lprobs_in).reshape({-1, v}).to(torch::kCPU);
  torch::Tensor probs = lprobs.exp();
  torch::Tensor sorted_index;  // set when the draw runs over a sorted, truncated list
  if (topk_ > 0 || topp_ > 0) {
    auto [sorted, index] = torch::sort(probs, -1, /*descending=*/true);
    if (topk_ > 0 && topk_ < v) sorted.narrow(1, topk_, v - topk_).zero_();
    if (topp_ > 0) {
      // Keep a token while the mass before it is below p (the one crossing p stays).
      torch::Tensor before = sorted.cumsum(1) - sorted;
      sorted.masked_fill_(before.ge(topp_), 0);
    }
    probs = sorted, sorted_index = index;
  }
  torch::Tensor tokens = step == 0 ? draw(probs, k) : draw(probs, 1);  // [n, k] or [n*k, 1]
  if (sorted_index.defined()) tokens = sorted_index.gather(1, tokens);
  torch::Tensor token_lprobs = lprobs.gather(1, tokens);
  tokens = tokens.reshape({n, k}), token_lprobs = token_lprobs.reshape({n, k});
  auto device = lprobs_in.device();
  torch::Tensor beams = torch::arange(k, torch::kLong).repeat({n, 1});
  if (step == 0) beams.zero_();
  return {token_lprobs.to(device) + (step == 0 ? torch::zeros_like(cumulative) : cumulative), tokens.to(device),
          beams.to(device), token_lprobs.to(device)};
}

void ConstrainedBeamSearch::begin(const Batch& batch) {
  eos_ = batch.eos;
  column_ids_ = batch.column_ids;
  column_of_id_.clear();
  if (!column_ids_.empty()) {
    column_of_id_.assign(static_cast<size_t>(*std::max_element(column_ids_.begin(), column_ids_.end()) + 1), -1);
    for (size_t c = 0; c < column_ids_.size(); ++c) column_of_id_[static_cast<size_t>(column_ids_[c])] = int64_t(c);
  }
  row_max_len_ = batch.row_max_len;
  states_.assign(row_max_len_.size(), ConstraintState());
  if (batch.constraints)
    for (size_t r = 0; r < states_.size(); ++r)
      states_[r] = ConstraintState(&(*batch.constraints)[r / static_cast<size_t>(batch.beam)], order_);
}

void ConstrainedBeamSearch::advance(const std::vector<int64_t>& rows, const std::vector<int64_t>& tokens) {
  std::vector<ConstraintState> states(rows.size());
  std::vector<int64_t> max_len(rows.size());
  for (size_t r = 0; r < rows.size(); ++r) {
    states[r] = states_[static_cast<size_t>(rows[r])].advance(tokens[r]);
    max_len[r] = row_max_len_[static_cast<size_t>(rows[r])];
  }
  states_ = std::move(states), row_max_len_ = std::move(max_len);
}

Candidates ConstrainedBeamSearch::step(int64_t step, const torch::Tensor& scores, const torch::Tensor& normalizer,
                                       const torch::Tensor& cumulative) {
  const int64_t n = scores.size(0), k = scores.size(1), v = scores.size(2), width = 2 * k;
  const double neg_inf = -std::numeric_limits<double>::infinity();
  auto column_of = [this, v](int64_t id) {
    const int64_t c = column_of_id_.empty() ? id : id < int64_t(column_of_id_.size()) ? column_of_id_[id] : -1;
    return c >= 0 && c < v ? c : -1;
  };
  // Unfinished rows may not end; rows with no more room than constraint tokens left may
  // only advance them (their constraint candidates are added below, from the unmasked scores).
  std::vector<int64_t> no_eos, only_constraints;
  for (int64_t r = 0; r < n * k; ++r) {
    const ConstraintState& state = states_[static_cast<size_t>(r)];
    if (state.finished()) continue;
    no_eos.push_back(r);
    if (state.total() - state.met() >= row_max_len_[static_cast<size_t>(r)] - step) only_constraints.push_back(r);
  }
  const torch::Tensor masked = scores.clone();
  const torch::Tensor flat = masked.view({n * k, v});
  const auto device = scores.device();
  const int64_t eos_column = column_of(eos_);
  if (!no_eos.empty() && eos_column >= 0)
    flat.select(1, eos_column).index_fill_(0, torch::tensor(no_eos, torch::kLong).to(device), neg_inf);
  if (!only_constraints.empty()) flat.index_fill_(0, torch::tensor(only_constraints, torch::kLong).to(device), neg_inf);
  const Candidates top = best_extensions(masked, normalizer, cumulative, width, step == 0);

  // Each beam's best token and the tokens that advance its constraints: (row, column).
  std::vector<int64_t> extra_rows, extra_columns;
  const torch::Tensor best_column = flat.argmax(1).to(torch::kCPU);
  const auto best = best_column.accessor<int64_t, 1>();
  std::vector<uint8_t> progress_only(static_cast<size_t>(n * k), 0);
  for (int64_t r : only_constraints) progress_only[static_cast<size_t>(r)] = 1;
  for (int64_t r = 0; r < n * k; ++r) {
    if (step == 0 && r % k != 0) continue;  // the first step extends beam 0 only
    if (step > 0 && !progress_only[static_cast<size_t>(r)]) extra_rows.push_back(r), extra_columns.push_back(best[r]);
    for (int64_t id : states_[static_cast<size_t>(r)].next_tokens()) {
      const int64_t c = column_of(id);
      if (c >= 0) extra_rows.push_back(r), extra_columns.push_back(c);
    }
  }
  torch::Tensor extra_lprobs;
  if (!extra_rows.empty()) {
    const torch::Tensor rows = torch::tensor(extra_rows, torch::kLong).to(device);
    const torch::Tensor columns = torch::tensor(extra_columns, torch::kLong).to(device);
    // Constraint tokens score from the scores without the progress mask (</s> is never one).
    const torch::Tensor eos_masked = scores.clone().view({n * k, v});
    if (!no_eos.empty() && eos_column >= 0)
      eos_masked.select(1, eos_column).index_fill_(0, torch::tensor(no_eos, torch::kLong).to(device), neg_inf);
    extra_lprobs = (eos_masked.index({rows, columns}) - normalizer.reshape({-1}).index_select(0, rows))
                       .to(torch::kDouble)
                       .to(torch::kCPU)
                       .contiguous();
  }
  const torch::Tensor host = torch::stack({top.scores.to(torch::kDouble), top.tokens.to(torch::kDouble),
                                           top.beams.to(torch::kDouble), top.token_lprobs.to(torch::kDouble)})
                                 .to(torch::kCPU);
  const auto h = host.accessor<double, 3>();
  const torch::Tensor cumulative_host = cumulative.to(torch::kDouble).to(torch::kCPU).reshape({-1});
  const auto cum = cumulative_host.accessor<double, 1>();

  struct Candidate {
    double score, lprob;
    int64_t column, beam, bank;
  };
  torch::Tensor out_scores = torch::full({n, width}, neg_inf, torch::kDouble);
  torch::Tensor out_tokens = torch::zeros({n, width}, torch::kLong), out_beams = torch::zeros({n, width}, torch::kLong);
  torch::Tensor out_lprobs = torch::zeros({n, width}, torch::kDouble);
  auto os = out_scores.accessor<double, 2>(), ol = out_lprobs.accessor<double, 2>();
  auto ot = out_tokens.accessor<int64_t, 2>(), ob = out_beams.accessor<int64_t, 2>();
  size_t e = 0;
  for (int64_t i = 0; i < n; ++i) {
    std::vector<Candidate> cands;
    auto add = [&](double score, double lprob, int64_t column, int64_t beam) {
      if (!std::isfinite(score)) return;
      for (const auto& c : cands)
        if (c.beam == beam && c.column == column) return;
      const int64_t bank = states_[static_cast<size_t>(i * k + beam)].advance(id_of(column)).met();
      cands.push_back({score, lprob, column, beam, bank});
    };
    for (int64_t c = 0; c < width; ++c)
      add(h[0][i][c], h[3][i][c], static_cast<int64_t>(h[1][i][c]), static_cast<int64_t>(h[2][i][c]));
    for (; e < extra_rows.size() && extra_rows[e] < (i + 1) * k; ++e) {
      const int64_t r = extra_rows[e];
      const double lprob = extra_lprobs.data_ptr<double>()[e];
      add((step == 0 ? 0.0 : cum[r]) + lprob, lprob, extra_columns[e], r % k);
    }
    // Banks, the furthest first, each best first; then round-robin over the banks.
    std::stable_sort(cands.begin(), cands.end(), [](const Candidate& a, const Candidate& b) {
      return a.bank != b.bank ? a.bank > b.bank : a.score > b.score;
    });
    std::vector<std::pair<int64_t, size_t>> stripes;  // (rank in its bank, position): sorted = round-robin
    for (size_t c = 0, rank = 0; c < cands.size(); ++c) {
      rank = c > 0 && cands[c].bank == cands[c - 1].bank ? rank + 1 : 0;
      stripes.emplace_back(static_cast<int64_t>(rank), c);
    }
    std::stable_sort(stripes.begin(), stripes.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (int64_t c = 0; c < width && c < static_cast<int64_t>(stripes.size()); ++c) {
      const Candidate& chosen = cands[stripes[static_cast<size_t>(c)].second];
      os[i][c] = chosen.score, ol[i][c] = chosen.lprob, ot[i][c] = chosen.column, ob[i][c] = chosen.beam;
    }
  }
  const auto float_opts = torch::dtype(torch::kFloat).device(device);
  return {out_scores.to(float_opts), out_tokens.to(device), out_beams.to(device), out_lprobs.to(float_opts)};
}

std::unique_ptr<SearchStrategy> make_search(const SearchOptions& options) {
  if (options.constraints != ConstraintOrder::none) return std::make_unique<ConstrainedBeamSearch>(options.constraints);
  if (options.sampling) return std::make_unique<Sampling>(options.sampling_topk, options.sampling_topp, options.seed);
  return std::make_unique<BeamSearch>();
}

}  // namespace csan::generation
