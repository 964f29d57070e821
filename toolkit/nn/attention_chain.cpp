#include "toolkit/nn/attention_chain.h"

#include "toolkit/core/error.h"

namespace csan::nn {

void AttentionChainImpl::add(const std::string& name, std::shared_ptr<AttentionEntry> entry) {
  for (const auto& [existing, e] : entries_)
    if (existing == name) throw Error("attention entry '" + name + "' is named twice in one chain");
  const unsigned uses = entry->uses();
  const bool computes = uses & AttentionEntry::kComputes;
  const bool after_softmax = uses & (AttentionEntry::kProbabilities | AttentionEntry::kValues);
  if (computes && computing_)
    throw Error("attention entries '" + name + "' and another in '" + names() +
                "' both compute the attention; a chain holds at most one such entry");
  if ((computes && (uses_ & (AttentionEntry::kProbabilities | AttentionEntry::kValues))) ||
      (after_softmax && computing_))
    throw Error("attention entry '" + name + "' cannot be combined with '" + names() +
                "': an entry that computes the attention itself takes biases only, not probability transforms "
                "or value terms");
  register_module(name, entry);
  if (computes) computing_ = entry.get();
  uses_ |= uses;
  entries_.emplace_back(name, std::move(entry));
}

std::string AttentionChainImpl::names() const {
  std::string out;
  for (const auto& [name, e] : entries_) out += (out.empty() ? "" : ", ") + name;
  return out;
}

void AttentionChainImpl::scale(torch::Tensor& q, torch::Tensor& k, torch::Tensor& v) const {
  for (const auto& [name, e] : entries_)
    if (e->uses() & AttentionEntry::kScale) e->scale(q, k, v);
}

torch::Tensor AttentionChainImpl::bias(const AttentionInputs& in) const {
  torch::Tensor sum;
  for (const auto& [name, e] : entries_) {
    if (!(e->uses() & AttentionEntry::kBias)) continue;
    torch::Tensor b = e->bias(in);
    if (!b.defined()) continue;
    TORCH_CHECK(b.dim() == 4 && b.size(2) == in.query_length && b.size(3) == in.key_length, "attention entry '", name,
                "': bias ", b.sizes(), " for ", in.query_length, " queries and ", in.key_length, " keys");
    sum = sum.defined() ? sum + b : b;
  }
  return sum;
}

torch::Tensor AttentionChainImpl::probabilities(torch::Tensor probs, const AttentionInputs& in) const {
  for (const auto& [name, e] : entries_)
    if (e->uses() & AttentionEntry::kProbabilities) probs = e->probabilities(std::move(probs), in);
  return probs;
}

torch::Tensor AttentionChainImpl::values(const torch::Tensor& probs, const AttentionInputs& in) const {
  torch::Tensor sum;
  for (const auto& [name, e] : entries_) {
    if (!(e->uses() & AttentionEntry::kValues)) continue;
    torch::Tensor term = e->values(probs, in);
    if (term.defined()) sum = sum.defined() ? sum + term : term;
  }
  return sum;
}

torch::Tensor AttentionChainImpl::output(const torch::Tensor& context, const AttentionInputs& in) const {
  torch::Tensor sum;
  for (const auto& [name, e] : entries_) {
    if (!(e->uses() & AttentionEntry::kOutput)) continue;
    torch::Tensor term = e->output(context, in);
    if (term.defined()) sum = sum.defined() ? sum + term : term;
  }
  return sum;
}

torch::Tensor AttentionChainImpl::before(torch::Tensor x, const BeforeInputs& in) const {
  for (const auto& [name, e] : entries_)
    if (e->uses() & AttentionEntry::kBefore) x = e->before(x, in);
  return x;
}

}  // namespace csan::nn
