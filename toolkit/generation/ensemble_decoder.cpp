#include "toolkit/generation/ensemble_decoder.h"

#include <cmath>

#include "toolkit/core/error.h"

namespace csan::generation {

EnsembleDecoder::EnsembleDecoder(std::vector<std::shared_ptr<models::EncoderDecoderModel>> models,
                                 double temperature)
    : models_(std::move(models)), temperature_(temperature) {
  if (models_.empty()) throw Error("generation needs at least one model");
  for (auto& m : models_) m->eval();
}

void EnsembleDecoder::start(const torch::Tensor& src_tokens, const torch::Tensor& src_lengths,
                            int64_t rows_per_sentence) {
  const auto expand = torch::arange(src_tokens.size(0), torch::dtype(torch::kLong).device(src_tokens.device()))
                          .repeat_interleave(rows_per_sentence);
  encoder_outs_.clear();
  states_.assign(models_.size(), nn::IncrementalState());
  for (auto& m : models_) {
    models::EncoderOut out = m->encode(src_tokens, src_lengths);
    if (rows_per_sentence > 1) out.reorder(expand);
    encoder_outs_.push_back(std::move(out));
  }
}

torch::Tensor EnsembleDecoder::step(const torch::Tensor& prefix) {
  torch::Tensor sum;
  for (size_t i = 0; i < models_.size(); ++i) {
    torch::Tensor logits = models_[i]->decode(prefix, encoder_outs_[i], &states_[i]);
    logits = logits.select(1, logits.size(1) - 1);
    if (temperature_ != 1.0) logits = logits / temperature_;
    torch::Tensor lprobs = torch::log_softmax(logits, -1, torch::kFloat);
    if (models_.size() == 1) return lprobs;
    sum = sum.defined() ? torch::logaddexp(sum, lprobs) : lprobs;
  }
  return sum - std::log(static_cast<double>(models_.size()));
}

void EnsembleDecoder::reorder(const torch::Tensor& new_order, bool batch_shrank) {
  for (size_t i = 0; i < models_.size(); ++i) {
    states_[i].reorder(new_order);
    if (batch_shrank) encoder_outs_[i].reorder(new_order);
  }
}

}  // namespace csan::generation
