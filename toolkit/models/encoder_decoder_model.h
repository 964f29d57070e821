// The encoder-decoder family: every translation architecture (Transformer, CSAN, CCN)
// implements it; the translation task, its criterion and the sequence generator talk to
// it, and nobody switches on a model name.
// Layout: batch first; token tensors are int64 [B, T], right-padded with the
// dictionary's pad index; decoder inputs start with </s> (eos) as in fairseq.
// Inputs are named (the translation task's batch fields): "src_tokens" [B, S],
// "src_lengths" [B], "prev_output_tokens" [B, T].
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <string>

#include "toolkit/models/encoder_out.h"
#include "toolkit/models/model.h"
#include "toolkit/models/named_tensors.h"
#include "toolkit/nn/incremental_state.h"

namespace csan::models {

// The prefix of decoder layer i's entries in an IncrementalState.
inline std::string decoder_layer_key(int64_t i) { return "decoder.layers." + std::to_string(i); }

class EncoderDecoderModel : public Model {
 public:
  std::string family() const override { return kEncoderDecoder; }

  // Reads the source fields of `input` ("src_tokens", "src_lengths").
  virtual EncoderOut encode(const NamedTensors& input) = 0;
  // prev_output_tokens [B, T] -> logits [B, T, V] (unnormalized). With a state, only the
  // last position(s) not yet cached are computed, and the state is extended.
  virtual torch::Tensor decode(const torch::Tensor& prev_output_tokens, const EncoderOut& encoder_out,
                               nn::IncrementalState* state = nullptr) = 0;

  // Logits [N, V] of the target positions `positions` (int64 [N] into the flattened
  // [B * T]) only: training never needs the vocabulary-wide logits at padding, and a
  // model may skip computing them. `input` holds the source fields and
  // "prev_output_tokens". The default computes all and selects.
  virtual torch::Tensor forward_positions(const NamedTensors& input, const torch::Tensor& positions) {
    auto logits = forward(input);
    return logits.reshape({-1, logits.size(-1)}).index_select(0, positions);
  }

  virtual int64_t max_source_positions() const = 0;
  virtual int64_t max_target_positions() const = 0;
  // The decoder's first input is <pad> instead of </s> (an imported Marian model's
  // decoder_start_token_id; model.decoder_start).
  virtual bool decoder_starts_with_pad() const { return false; }
  // Decoder layers that each attend once over the encoder's one memory, their caches keyed
  // decoder_layer_key(i): alignments read that attention (IncrementalState::request_attention).
  // 0: none (CCN's layers attend to two memories).
  virtual int64_t cross_attention_layers() const { return 0; }

  // Logits [B, T, V] of a whole batch (source fields and "prev_output_tokens").
  torch::Tensor forward(const NamedTensors& input) { return decode(input.at("prev_output_tokens"), encode(input)); }
  // The same from plain tensors (generation, tests).
  EncoderOut encode_tokens(const torch::Tensor& src_tokens, const torch::Tensor& src_lengths) {
    return encode(NamedTensors{{"src_tokens", src_tokens}, {"src_lengths", src_lengths}});
  }
  torch::Tensor forward(const torch::Tensor& src_tokens, const torch::Tensor& src_lengths,
                        const torch::Tensor& prev_output_tokens) {
    return decode(prev_output_tokens, encode_tokens(src_tokens, src_lengths));
  }
};

}  // namespace csan::models
