// The interface the trainer and the sequence generator talk to. Every translation
// architecture (Transformer, CSAN, CCN) implements it; nobody switches on a model name.
// Layout: batch first; token tensors are int64 [B, T], right-padded with the
// dictionary's pad index; decoder inputs start with </s> (eos) as in fairseq.
#pragma once

#include <cstdint>

#include <torch/torch.h>

#include "toolkit/nn/incremental_state.h"

namespace csan::models {

struct EncoderOut {
  torch::Tensor out;           // [B, S, D]
  torch::Tensor padding_mask;  // [B, S] bool, true at padding
  // Keeps rows new_order of every tensor (beam search expands/reorders sentences).
  void reorder(const torch::Tensor& new_order) {
    out = out.index_select(0, new_order);
    padding_mask = padding_mask.index_select(0, new_order);
  }
};

class EncoderDecoderModel : public torch::nn::Module {
 public:
  // src_tokens [B, S], src_lengths [B].
  virtual EncoderOut encode(const torch::Tensor& src_tokens, const torch::Tensor& src_lengths) = 0;
  // prev_output_tokens [B, T] -> logits [B, T, V] (unnormalized). With a state, only the
  // last position(s) not yet cached are computed, and the state is extended.
  virtual torch::Tensor decode(const torch::Tensor& prev_output_tokens, const EncoderOut& encoder_out,
                               nn::IncrementalState* state = nullptr) = 0;

  torch::Tensor forward(const torch::Tensor& src_tokens, const torch::Tensor& src_lengths,
                        const torch::Tensor& prev_output_tokens) {
    return decode(prev_output_tokens, encode(src_tokens, src_lengths));
  }

  // Logits [N, V] of the target positions `positions` (int64 [N] into the flattened
  // [B * T]) only: training never needs the vocabulary-wide logits at padding, and a
  // model may skip computing them. The default computes all and selects.
  virtual torch::Tensor forward_positions(const torch::Tensor& src_tokens, const torch::Tensor& src_lengths,
                                          const torch::Tensor& prev_output_tokens, const torch::Tensor& positions) {
    auto logits = forward(src_tokens, src_lengths, prev_output_tokens);
    return logits.reshape({-1, logits.size(-1)}).index_select(0, positions);
  }

  virtual int64_t max_source_positions() const = 0;
  virtual int64_t max_target_positions() const = 0;
};

}  // namespace csan::models
