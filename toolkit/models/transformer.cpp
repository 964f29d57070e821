#include "toolkit/models/transformer.h"

#include "toolkit/core/error.h"
#include "toolkit/models/token_embedding.h"

namespace csan::models {

TransformerModel::TransformerModel(const TransformerOptions& options, const ModelContext& context)
    : options_(options) {
  const int64_t d = options.layer.embed_dim, pad = context.pad_index;
  if (options.share_all_embeddings) {
    if (!context.joined_dictionary || context.src_vocab_size != context.tgt_vocab_size)
      throw Error::for_key("model.share_all_embeddings",
                           "requires a joined dictionary (preprocess with --joined-dictionary)");
    TokenEmbedding shared(context.src_vocab_size, d, pad);
    encoder = register_module("encoder", TransformerEncoder(options, shared, pad));
    decoder = register_module("decoder", TransformerDecoder(options, shared, /*owned_elsewhere=*/true, pad));
  } else {
    encoder = register_module("encoder", TransformerEncoder(options, TokenEmbedding(context.src_vocab_size, d, pad), pad));
    decoder = register_module(
        "decoder", TransformerDecoder(options, TokenEmbedding(context.tgt_vocab_size, d, pad), false, pad));
  }
}

EncoderOut TransformerModel::encode(const torch::Tensor& src_tokens, const torch::Tensor&) {
  return encoder(src_tokens);
}

torch::Tensor TransformerModel::decode(const torch::Tensor& prev_output_tokens, const EncoderOut& encoder_out,
                                       nn::IncrementalState* state) {
  return decoder(prev_output_tokens, encoder_out, state);
}

torch::Tensor TransformerModel::forward_positions(const torch::Tensor& src_tokens, const torch::Tensor& src_lengths,
                                                const torch::Tensor& prev_output_tokens,
                                                const torch::Tensor& positions) {
  return decoder(prev_output_tokens, encode(src_tokens, src_lengths), nullptr, positions);
}

void TransformerModel::for_each_attention(
    const std::function<void(const nn::AttentionSite&, nn::MultiheadAttention&)>& visit) {
  const int64_t heads = options_.layer.heads;
  for (size_t i = 0; i < encoder->layers->size(); ++i) {
    auto layer = encoder->layers[i]->as<nn::EncoderLayer>();
    visit({true, true, int64_t(i), heads}, layer->self_attn);
  }
  for (size_t i = 0; i < decoder->layers->size(); ++i) {
    auto layer = decoder->layers[i]->as<nn::DecoderLayer>();
    visit({false, true, int64_t(i), heads}, layer->self_attn);
    visit({false, false, int64_t(i), heads}, layer->encoder_attn);
  }
}

}  // namespace csan::models
