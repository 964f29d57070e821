#include "toolkit/nn/local_hard_entry.h"

#include <memory>

#include "toolkit/core/error.h"
#include "toolkit/nn/entry_layers.h"

CSAN_REGISTRATION_ANCHOR(local_hard_entry)

namespace csan::nn {

const core::OptionTable<LocalHardOptions>& local_hard_option_table() {
  static const auto table =
      core::OptionTable<LocalHardOptions>()
          .add("model.local_hard.window", &LocalHardOptions::window,
               "LOCAL_HARD: D, a query sees the keys within D positions of its predicted centre", 1)
          .add("model.local_hard.global_heads", &LocalHardOptions::global_heads,
               "LOCAL_HARD: heads that keep full scope (the first ones); the others predict a centre", 0)
          .add("model.local_hard.form", &LocalHardOptions::form,
               "LOCAL_HARD: window (the paper: keys within D of the centre, probabilities times the Gaussian, not "
               "renormalised) or authors (the first author's code: no window, the Gaussian's logarithm added to the "
               "logits)",
               {"window", "authors"})
          .add("model.local_hard.encoder_layers", &LocalHardOptions::encoder_layers,
               "LOCAL_HARD: encoder layers (0 = lowest) whose self-attention is local-p", 0)
          .add("model.local_hard.decoder_layers", &LocalHardOptions::decoder_layers,
               "LOCAL_HARD: decoder layers whose self-attention is local-p", 0)
          .add("model.local_hard.cross_layers", &LocalHardOptions::cross_layers,
               "LOCAL_HARD: decoder layers whose attention over the source is local-p (Luong et al.'s own use)", 0);
  return table;
}

LocalHardOptions LocalHardOptions::from_config(const core::Config& cfg) { return local_hard_option_table().read(cfg); }

LocalHardEntry::LocalHardEntry(int64_t embed_dim, int64_t num_heads, int64_t global_heads, int64_t window,
                               bool authors_form)
    : num_heads_(num_heads), global_heads_(global_heads), window_(window), authors_form_(authors_form) {
  const int64_t local = num_heads - global_heads;
  if (local < 1)
    throw Error::for_key("model.local_hard.global_heads", std::to_string(global_heads) + " leaves none of the " +
                                                              std::to_string(num_heads) + " heads local");
  predictor = register_module("predictor", PositionPredictor(embed_dim, local * (embed_dim / num_heads), local));
}

torch::Tensor LocalHardEntry::centres(const AttentionInputs& in) {
  const torch::Tensor aligned = predictor(in.q.reshape({in.q.size(0), in.query_length, -1}));  // [B, Tq, L]
  return aligned.transpose(1, 2).unsqueeze(-1) * (visible_key_count(in) - 1);
}

torch::Tensor LocalHardEntry::offsets(const AttentionInputs& in) {
  // bias() and probabilities() of one attention call see the same inputs (the same q).
  if (!cached_q_.defined() || !cached_q_.is_same(in.q)) {
    cached_offsets_ = in.key_positions().to(torch::kFloat).view({1, 1, 1, -1}) - centres(in);
    cached_q_ = in.q;
  }
  return cached_offsets_;
}

namespace {

// The global heads' part of a [B, H, Tq, Tk] tensor whose local heads are `local`.
torch::Tensor with_global_heads(const torch::Tensor& local, int64_t global_heads, double fill) {
  if (global_heads == 0) return local;
  auto sizes = local.sizes().vec();
  sizes[1] = global_heads;
  return torch::cat({torch::full(sizes, fill, local.options()), local}, 1);
}

}  // namespace

torch::Tensor LocalHardEntry::log_gaussian(const torch::Tensor& offsets) const {
  const double sigma = window_ / 2.0;
  return offsets.square() * (-1.0 / (2 * sigma * sigma));
}

torch::Tensor LocalHardEntry::bias(const AttentionInputs& in) {
  if (authors_form_) {
    // No probabilities() call follows to clear a cache: computed here, with its gradient.
    const torch::Tensor offsets = in.key_positions().to(torch::kFloat).view({1, 1, 1, -1}) - centres(in);
    return with_global_heads(log_gaussian(offsets), global_heads_, 0.0);
  }
  const torch::Tensor outside = offsets(in).detach().abs() > double(window_);
  return with_global_heads(torch::zeros(outside.sizes(), torch::dtype(torch::kFloat).device(in.device()))
                               .masked_fill_(outside, kHiddenScore),
                           global_heads_, 0.0);
}

torch::Tensor LocalHardEntry::probabilities(torch::Tensor probs, const AttentionInputs& in) {
  const torch::Tensor gaussian = torch::exp(log_gaussian(offsets(in)));
  cached_q_ = cached_offsets_ = torch::Tensor();  // this call is done with them
  return probs * with_global_heads(gaussian, global_heads_, 1.0).to(probs.scalar_type());
}

namespace {

std::shared_ptr<AttentionEntry> make_local_hard_entry(const core::Config& cfg, const AttentionSite& site) {
  const LocalHardOptions o = LocalHardOptions::from_config(cfg);
  if (!applies_at({"local_hard", &o.encoder_layers, &o.decoder_layers, &o.cross_layers}, site)) return nullptr;
  return std::make_shared<LocalHardEntry>(site.embed_dim, site.num_heads, o.global_heads, o.window,
                                          o.form == "authors");
}

core::Registrar<AttentionEntrySpec> local_hard_entry(
    attention_entry_registry(), "local_hard",
    {"LOCAL_HARD (Luong et al. 2015 local-p, CSAN Table 1): hard window around a predicted centre, Gaussian-weighted",
     [](core::ConfigSchema& s) { local_hard_option_table().declare(s, /*with_defaults=*/false); },
     [] { return local_hard_option_table().defaults(); }, make_local_hard_entry});

}  // namespace

}  // namespace csan::nn
