// The Transformer of Vaswani et al. (2017) with fairseq's options; registered as
// "transformer" and its presets (transformer_tiny, transformer_base, transformer_big,
// transformer_base_prenorm, transformer_big_prenorm) in transformer_arch.cpp.
#pragma once

#include <torch/torch.h>

#include <functional>

#include "toolkit/models/encoder_decoder_model.h"
#include "toolkit/models/model_registry.h"
#include "toolkit/models/transformer_decoder.h"
#include "toolkit/models/transformer_encoder.h"
#include "toolkit/models/transformer_options.h"
#include "toolkit/nn/multihead_attention.h"

namespace csan::models {

class TransformerModel : public EncoderDecoderModel {
 public:
  // Throws csan::Error for share_all_embeddings without a joined dictionary.
  TransformerModel(const TransformerOptions& options, const ModelContext& context);

  EncoderOut encode(const NamedTensors& input) override;
  torch::Tensor decode(const torch::Tensor& prev_output_tokens, const EncoderOut& encoder_out,
                       nn::IncrementalState* state = nullptr) override;
  // Projects only the selected positions onto the vocabulary.
  torch::Tensor forward_positions(const NamedTensors& input, const torch::Tensor& positions) override;
  int64_t max_source_positions() const override { return options_.max_source_positions; }
  int64_t max_target_positions() const override { return options_.max_target_positions; }
  bool decoder_starts_with_pad() const override { return options_.decoder_start == "pad"; }
  int64_t cross_attention_layers() const override { return options_.decoder_layers; }

  // Sites encoder.self, then per decoder layer decoder.self and decoder.cross.
  void for_each_attention(const std::function<void(const nn::AttentionSite&, nn::MultiheadAttention&)>& visit) override;

  const TransformerOptions& options() const { return options_; }

  TransformerEncoder encoder{nullptr};
  TransformerDecoder decoder{nullptr};

 private:
  TransformerOptions options_;
};

}  // namespace csan::models
