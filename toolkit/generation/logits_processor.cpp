#include "toolkit/generation/logits_processor.h"

#include <limits>
#include <map>

namespace csan::generation {

namespace {
constexpr double kMaskedLogProb = -std::numeric_limits<double>::infinity();

// Sets every column but `keep` (per row, a column or -1 for none) to -inf in the rows of
// `rows` (bool [R]).
void keep_only(torch::Tensor& lprobs, const torch::Tensor& rows, const torch::Tensor& keep) {
  const auto column = keep.clamp_min(0).view({-1, 1});
  auto kept = lprobs.gather(1, column).masked_fill_(keep.lt(0).view({-1, 1}), kMaskedLogProb);
  auto masked = lprobs.clone().fill_(kMaskedLogProb).scatter_(1, column, kept);
  lprobs = torch::where(rows.view({-1, 1}), masked, lprobs);
}

void forbid(torch::Tensor& lprobs, int64_t column) {
  if (column >= 0) lprobs.select(1, column).fill_(kMaskedLogProb);
}
}  // namespace

ScoreColumns::ScoreColumns(const torch::Tensor& ids, int64_t vocab_size) {
  if (!ids.defined()) return;
  const torch::Tensor host = ids.to(torch::kCPU).to(torch::kLong).contiguous();
  by_id_.assign(vocab_size, -1);
  const int64_t* id = host.data_ptr<int64_t>();
  for (int64_t c = 0; c < host.numel(); ++c) by_id_.at(id[c]) = c;
  by_id_tensor_ = torch::tensor(by_id_, torch::kLong).to(ids.device());
}

torch::Tensor ScoreColumns::of(const torch::Tensor& ids) const {
  if (by_id_.empty()) return ids;
  return by_id_tensor_.to(ids.device()).index_select(0, ids.reshape({-1})).view(ids.sizes());
}

void SpecialTokenPenalty::apply(torch::Tensor& lprobs, const StepContext& context) const {
  forbid(lprobs, context.columns->of(special_.pad));
  if (!allow_bos_) forbid(lprobs, context.columns->of(special_.bos));
  const int64_t unk = context.columns->of(special_.unk);
  if (unkpen_ != 0 && unk >= 0) lprobs.select(1, unk).sub_(unkpen_);
}

void MinLength::apply(torch::Tensor& lprobs, const StepContext& context) const {
  if (context.step >= min_len_) return;
  const int64_t eos = context.columns->of(eos_);
  if (eos < 0) return;
  const auto& max_len = *context.max_len;
  bool all = true;
  for (int64_t m : max_len) all = all && m > context.step;
  if (all) {
    lprobs.select(1, eos).fill_(kMaskedLogProb);
    return;
  }
  for (size_t r = 0; r < max_len.size(); ++r)
    if (max_len[r] > context.step) lprobs[static_cast<int64_t>(r)][eos].fill_(kMaskedLogProb);
}

void NoRepeatNgram::apply(torch::Tensor& lprobs, const StepContext& context) const {
  const int64_t len = context.prefix.size(1);  // step + 1
  if (n_ <= 0 || len < n_ - 1 + 1) return;     // need n-1 context tokens and one earlier n-gram
  const torch::Tensor tokens = context.prefix.to(torch::kCPU).contiguous();
  const auto t = tokens.accessor<int64_t, 2>();
  std::vector<int64_t> rows, banned;
  for (int64_t r = 0; r < tokens.size(0); ++r) {
    // n-grams ending before the last n-1 tokens: does their head equal the tail?
    for (int64_t start = 0; start + n_ <= len; ++start) {
      bool same = true;
      for (int64_t k = 0; k < n_ - 1 && same; ++k) same = t[r][start + k] == t[r][len - (n_ - 1) + k];
      const int64_t column = same ? context.columns->of(t[r][start + n_ - 1]) : -1;
      if (column >= 0) {
        rows.push_back(r);
        banned.push_back(column);
      }
    }
  }
  if (rows.empty()) return;
  auto opts = torch::dtype(torch::kLong).device(lprobs.device());
  lprobs.index_put_({torch::tensor(rows, opts), torch::tensor(banned, opts)}, kMaskedLogProb);
}

void PrefixForcing::apply(torch::Tensor& lprobs, const StepContext& context) const {
  if (!context.forced.defined() || context.step >= context.forced.size(1)) return;
  const torch::Tensor token = context.forced.select(1, context.step);
  keep_only(lprobs, token.ne(pad_), context.columns->of(token.clamp_min(0)));
}

void MaxLength::apply(torch::Tensor& lprobs, const StepContext& context) const {
  const auto& max_len = *context.max_len;
  std::vector<uint8_t> at_end(max_len.size());
  bool any = false;
  for (size_t r = 0; r < max_len.size(); ++r) any |= (at_end[r] = context.step >= max_len[r]);
  if (!any) return;
  auto rows = torch::tensor(std::vector<int64_t>(at_end.begin(), at_end.end())).to(lprobs.device()).to(torch::kBool);
  auto eos =
      torch::full({lprobs.size(0)}, context.columns->of(eos_), torch::dtype(torch::kLong).device(lprobs.device()));
  keep_only(lprobs, rows, eos);
}

std::vector<std::unique_ptr<LogitsProcessor>> make_processors(const SearchOptions& options,
                                                              const SpecialTokens& special) {
  std::vector<std::unique_ptr<LogitsProcessor>> chain;
  chain.push_back(std::make_unique<SpecialTokenPenalty>(special, options.unkpen, options.allow_bos));
  if (options.prefix_size > 0) chain.push_back(std::make_unique<PrefixForcing>(special.pad));
  if (options.min_len > 0) chain.push_back(std::make_unique<MinLength>(options.min_len, special.eos));
  if (options.no_repeat_ngram_size > 0) chain.push_back(std::make_unique<NoRepeatNgram>(options.no_repeat_ngram_size));
  chain.push_back(std::make_unique<MaxLength>(special.eos));
  return chain;
}

}  // namespace csan::generation
