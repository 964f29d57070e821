#include "toolkit/generation/ensemble_decoder.h"

#include <cmath>
#include <limits>

#include "toolkit/core/error.h"
#include "toolkit/generation/vocab_kernels.h"
#include "toolkit/nn/compute_device.h"
#include "toolkit/nn/projection.h"

namespace csan::generation {

EnsembleDecoder::EnsembleDecoder(std::vector<std::shared_ptr<models::EncoderDecoderModel>> models, double temperature)
    : models_(std::move(models)), temperature_(temperature) {
  if (models_.empty()) throw Error("generation needs at least one model");
  for (auto& m : models_) {
    m->eval();
    if (nn::device_of(*m) != nn::device_of(*models_.front()))
      throw Error("generation: the ensemble's models live on different devices");
  }
}

void EnsembleDecoder::start(const torch::Tensor& src_tokens, const torch::Tensor& src_lengths,
                            int64_t rows_per_sentence, int64_t max_positions) {
  if (rows_per_sentence < 1) throw Error("generation: rows per sentence must be positive");
  encoder_outs_.clear();
  // The previous batch's states start again: their caches' buffers are written again (see
  // IncrementalState::restart), so that a worker's memory stays at its largest batch's.
  if (states_.size() == models_.size())
    for (auto& state : states_) state.restart();
  else
    states_.assign(models_.size(), nn::IncrementalState());
  // A model that decodes with bf16 or int8 weights on the CPU keeps its attention keys
  // and values in bf16: half the memory of a batch's caches (most of what a batch adds
  // to the weights), and half the bytes the decoding kernel reads per step.
  for (size_t i = 0; i < models_.size(); ++i) {
    states_[i].reserve(max_positions);
    if (nn::device_of(*models_[i]).is_cpu() && nn::has_converted_projections(*models_[i]))
      states_[i].set_compact_type(torch::kBFloat16);
    // Each model selects its own rows of the shortlist (in its own precision).
    if (output_vocabulary_.defined())
      states_[i].set_output_vocabulary(std::make_shared<nn::OutputVocabulary>(output_vocabulary_));
    if (!attention_layers_.empty()) states_[i].request_attention(attention_layers_[i]);
  }
  for (auto& m : models_) {
    models::EncoderOut out = m->encode_tokens(src_tokens, src_lengths);
    // Checked once here rather than at every step: a batch without source padding
    // needs no mask.
    out.drop_empty_masks();
    encoder_outs_.push_back(std::move(out));
  }
}

StepScores EnsembleDecoder::step_scores(const torch::Tensor& prefix) {
  const torch::Tensor columns = output_vocabulary_.defined() && shortlist_scores_ == ShortlistScores::compact
                                    ? output_vocabulary_
                                    : torch::Tensor();
  torch::Tensor sum, attention;
  for (size_t i = 0; i < models_.size(); ++i) {
    torch::Tensor logits = models_[i]->decode(prefix, encoder_outs_[i], &states_[i]);
    if (!attention_layers_.empty()) {
      const torch::Tensor a = states_[i].take_attention();
      if (!a.defined()) throw Error("--print-alignment: the model's decoder left no attention over its source");
      attention = attention.defined() ? attention + a.select(1, a.size(1) - 1) : a.select(1, a.size(1) - 1);
    }
    logits = logits.select(1, logits.size(1) - 1).to(torch::kFloat);
    if (output_vocabulary_.defined()) {
      if (logits.size(1) != output_vocabulary_.size(0))
        throw Error("--shortlist: this model's decoder scores the whole vocabulary (it does not support a shortlist)");
      if (shortlist_scores_ == ShortlistScores::whole_vocabulary) logits = expand_to_vocabulary(logits);
    }
    if (temperature_ != 1.0) logits = logits / temperature_;
    if (models_.size() == 1) {
      logits = logits.contiguous();
      return {logits, row_logsumexp(logits), columns, attention};
    }
    // Over a shortlist's columns log_softmax is the whole vocabulary's with -inf elsewhere.
    torch::Tensor lprobs = torch::log_softmax(logits, -1);
    sum = sum.defined() ? torch::logaddexp(sum, lprobs) : lprobs;
  }
  sum = sum - std::log(static_cast<double>(models_.size()));
  if (attention.defined()) attention = attention / static_cast<double>(models_.size());
  return {sum, torch::zeros({sum.size(0)}, sum.options()), columns, attention};
}

torch::Tensor EnsembleDecoder::step(const torch::Tensor& prefix) {
  const StepScores s = step_scores(prefix);
  return s.ids.defined() ? expand_to_vocabulary(s.lprobs()) : s.lprobs();
}

torch::Device EnsembleDecoder::device() const { return nn::device_of(*models_.front()); }

void EnsembleDecoder::set_output_vocabulary(const torch::Tensor& ids, int64_t vocab_size, ShortlistScores scores) {
  output_vocabulary_ = ids.defined() ? ids.to(device()) : ids;
  vocab_size_ = vocab_size;
  shortlist_scores_ = scores;
}

torch::Tensor EnsembleDecoder::expand_to_vocabulary(const torch::Tensor& logits) const {
  torch::Tensor full =
      torch::full({logits.size(0), vocab_size_}, -std::numeric_limits<float>::infinity(), logits.options());
  return full.index_copy_(1, output_vocabulary_, logits);
}

std::string alignment_layer_key(const models::EncoderDecoderModel& model, int64_t layer) {
  const int64_t layers = model.cross_attention_layers();
  if (layers == 0)
    throw Error(
        "--print-alignment: the model's decoder layers do not attend once over one encoder memory (CCN attends to "
        "two); alignments need a Transformer-family model",
        ErrorKind::bad_option);
  const int64_t resolved = layer < 0 ? layers + layer : layer;
  if (resolved < 0 || resolved >= layers)
    throw Error("--alignment-layer: " + std::to_string(layer) + " is outside the decoder's " + std::to_string(layers) +
                    " layers (0.." + std::to_string(layers - 1) + ", or -1.." + std::to_string(-layers) +
                    " counting from the last)",
                ErrorKind::bad_option);
  return models::decoder_layer_key(resolved);
}

void EnsembleDecoder::request_attention(std::optional<int64_t> layer) {
  attention_layers_.clear();
  if (layer)
    for (const auto& m : models_) attention_layers_.push_back(alignment_layer_key(*m, *layer));
}

void EnsembleDecoder::reorder(const torch::Tensor& new_order, const torch::Tensor& sentences) {
  for (size_t i = 0; i < models_.size(); ++i) {
    states_[i].reorder_beams(new_order, sentences);
    if (sentences.defined()) encoder_outs_[i].reorder(sentences);
  }
}

}  // namespace csan::generation
