// Crossed Co-Attention Networks (Li & Jiang 2020, "Two-Headed Monster and Crossed
// Co-Attention Networks"): two symmetric encoder branches fed the same source sentence
// and crossed by co-attention (ccn_encoder.h), and a decoder whose two encoder-decoder
// attentions take keys from one branch's memory and values from the other's, fused 2d -> d
// (ccn_decoder.h). Registered as "ccn" and its presets (ccn_tiny, ccn_base, ccn_big) in
// ccn_arch.cpp.
#pragma once

#include <torch/torch.h>

#include <functional>

#include "toolkit/models/ccn_decoder.h"
#include "toolkit/models/ccn_encoder.h"
#include "toolkit/models/ccn_options.h"
#include "toolkit/models/encoder_decoder_model.h"
#include "toolkit/models/model_context.h"
#include "toolkit/models/transformer_options.h"

namespace csan::models {

class CcnModel : public EncoderDecoderModel {
 public:
  // Throws csan::Error for share_all_embeddings without a joined dictionary.
  CcnModel(const TransformerOptions& options, const CcnOptions& ccn, const ModelContext& context);

  // In training, each branch sees the source with its own random swap of two tokens
  // (ccn_input_corruption.h); in evaluation both see it as it is.
  EncoderOut encode(const NamedTensors& input) override;
  torch::Tensor decode(const torch::Tensor& prev_output_tokens, const EncoderOut& encoder_out,
                       nn::IncrementalState* state = nullptr) override;
  // Projects only the selected positions onto the vocabulary.
  torch::Tensor forward_positions(const NamedTensors& input, const torch::Tensor& positions) override;
  int64_t max_source_positions() const override { return options_.max_source_positions; }
  int64_t max_target_positions() const override { return options_.max_target_positions; }

  // Sites per encoder layer encoder.left.self, encoder.right.self; then per decoder
  // layer decoder.self, decoder.cross.left, decoder.cross.right.
  void for_each_attention(const std::function<void(const nn::AttentionSite&, nn::MultiheadAttention&)>& visit) override;

  const TransformerOptions& options() const { return options_; }
  const CcnOptions& ccn_options() const { return ccn_; }

  CcnEncoder encoder{nullptr};
  CcnDecoder decoder{nullptr};

 private:
  TransformerOptions options_;
  CcnOptions ccn_;
  int64_t pad_index_;
};

}  // namespace csan::models
